// The esbuild options the service's build (scripts/build.mjs) and the test bundles
// (scripts/test.mjs) share: ES modules for Node 20, split into shared chunks, with the
// packages of node_modules left as imports (installed, not copied).
export const node_bundle_options = {
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcesContent: false,
  logLevel: 'warning',
}
