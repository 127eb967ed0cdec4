// The package's public API: the partner SDK and the contract it is typed from.
export * from './client/index.ts'
