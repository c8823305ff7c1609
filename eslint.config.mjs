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
      // Control characters are what these patterns look for (XML 1.0 §2.2 Char, URL and header checks).
      'no-control-regex': 'off',
      // A leading underscore marks a parameter or binding kept for its position (an interface's signature).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      // Packages without types for a CommonJS import: required with a cast to the part that is used.
      '@typescript-eslint/no-require-imports': [
        'error',
        { allow: ['^mpd-parser$', '^m3u8-parser$', '^@assemblyscript/loader$', '^codem-isoboxer$'] },
      ],
    },
  },
  {
    // Plain CommonJS scripts that node runs as they are: require is their import.
    files: ['**/*.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The CLI loads each command's heavy modules (HTTP stack, proxy-wasm host, YAML) when the command runs: start-up cost.
    files: ['origin/cli/**/*.ts', 'origin/edge-config/**/*.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // A bench child is the origin or the edge and loads only that one's modules: its CPU and memory are measured.
    files: ['bench/edge-bench.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Hostcalls and their call wrappers mirror the proxy-wasm ABI 0.2.1 signatures, which are positional.
    files: ['host-glue/proxy-wasm/hostcalls*.ts', 'host-glue/proxy-wasm/vm.ts', 'test/assembly/proxy/stub-host.ts'],
    rules: { 'max-params': 'off' },
  },
);
