// The product version, as written into server manifests and the Server header.
// Kept in step with package.json by test/origin/version.test.ts.
export const VERSION = '0.1.0';
