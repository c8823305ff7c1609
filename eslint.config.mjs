// ESLint: a few rules that catch real mistakes. Formatting is Prettier's (.prettierrc.json).
// AssemblyScript (assembly/, test/wasm/) is not linted: its decorators and load/store builtins
// are not TypeScript, and asc checks it when the build compiles it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'build/',
      'dist/',
      'coverage/',
      'test-artifacts/',
      'bench/.cache/',
      'assembly/',
      'test/wasm/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        process: 'readonly',
        console: 'readonly',
      },
    },
    rules: {
      'no-shadow': 'off',
      '@typescript-eslint/no-shadow': 'error',
      'max-params': ['error', 5],
      // A leading underscore marks a parameter a default implementation must declare but does not
      // read (host-glue/proxy-wasm/context.ts mirrors Envoy's Context methods).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
);
