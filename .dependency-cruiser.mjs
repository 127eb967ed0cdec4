// The architecture rules: what may import what under src/ (issue 29, "Make the shape
// checkable"). `npm test` checks them (scripts/arch.mjs, beside the type check); `npm run arch`
// checks them alone. The code breaks none of them: no violation is tolerated (the known list,
// .dependency-cruiser-known-violations.json, was emptied by the module work and is gone), so any
// violation fails the run.
//
// Type-only imports count (tsPreCompilationDeps): a cycle through `import type` is still a
// cycle of the design, even though it is erased before the code runs.

// A contract file: zod schemas and the types inferred from them, shared by the server, the SDK
// and the CLI. The one table of error types (src/contract/error-types.ts) is one of them.
const contract = '(^src/contract/|-contract\\.ts$)'

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A module reaches itself through its imports (type-only imports included). Break the ' +
        'loop: move what both sides need below both, or have the lower side take it as a ' +
        'parameter. (The bank\'s Database and Services types are derived from the list of ' +
        'modules, which every capability\'s code types itself with: those loops, through the ' +
        'composition root\'s type files alone, are the derivation and not flagged.)',
      from: {},
      to: { circular: true,
        viaOnly: { pathNot: '^src/(schema|services|module|modules)\\.ts$' } },
    },
    {
      name: 'db-imports-no-capability',
      severity: 'error',
      comment:
        'src/db/ is a toolkit that knows no capability: it imports only db/ itself and packages. ' +
        'A capability brings its own tables and migrations to the composition root.',
      from: { path: '^src/db/' },
      // The root src/schema.ts has a rule of its own (db-and-ledger-import-no-schema).
      to: { path: '^src/', pathNot: '^src/(db/|schema\\.ts$)' },
    },
    {
      name: 'ledger-imports-nothing-above-db',
      severity: 'error',
      comment:
        'src/ledger/ imports only ledger/, db/, the clock, the one error table (src/errors.ts) ' +
        'and the Module type its declaration fills in (src/module.ts): no capability, contract, ' +
        'rail, transport or audit code. Capabilities call the ledger, never the other way round.',
      // Its declaration (ledger-module.ts) is the composition's: it builds the writer with the
      // bank's store and metrics; the ledger's code stays below every capability.
      from: { path: '^src/ledger/', pathNot: '^src/ledger/ledger-module\\.ts$' },
      // The root src/schema.ts has a rule of its own (db-and-ledger-import-no-schema).
      to: { path: '^src/',
        pathNot: '^src/(ledger/|db/|clock\\.ts$|errors\\.ts$|module\\.ts$|schema\\.ts$)' },
    },
    {
      name: 'money-through-the-ledger-writer',
      severity: 'error',
      comment:
        'Money has one door, the ledger writer (src/ledger/ledger-writer.ts): a capability ' +
        'submits a kind to one of its desks (payments, settlements) or writes a JournalKind ' +
        'through its composed door (write), and records on a Journal. The batch, the group ' +
        "committer and the remembered accounts are the writer's own: no file outside " +
        'src/ledger/ opens a batch, batches requests or keeps account states.',
      from: { path: '^src/', pathNot: '^src/ledger/' },
      to: { path: '^src/ledger/(ledger-batch|group-committer|known-accounts)\\.ts$' },
    },
    {
      name: 'db-and-ledger-import-no-schema',
      severity: 'error',
      comment:
        "src/schema.ts is the bank's whole Database, every capability's tables: only " +
          "capabilities " +
        'and the composition root type their queries with it. db/ (the toolkit) takes the tables ' +
        "as a type parameter and the ledger types its queries with its own LedgerTables, so that " +
        'neither depends, even in types, on the capabilities above them.',
      from: { path: '^src/(db|ledger)/', pathNot: '^src/ledger/ledger-module\\.ts$' },
      to: { path: '^src/schema\\.ts$' },
    },
    {
      name: 'contract-imports-no-server-code',
      severity: 'error',
      comment:
        'A contract file (src/contract/, *-contract.ts) is shared with the SDK and the CLI: it ' +
        'imports only other contract files and packages.',
      from: { path: contract },
      to: { path: '^src/', pathNot: contract },
    },
    {
      name: 'sdk-imports-no-server-code',
      severity: 'error',
      comment:
        'src/client/ (the SDK partners install) imports only its own folder, contract files, the ' +
        'NATS code it shares with the service (src/nats/) and packages: never the service, its ' +
        'transport or its storage.',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: `^src/client/|^src/nats/|${contract}` },
    },
    {
      name: 'shared-nats-imports-only-packages',
      severity: 'error',
      comment:
        'src/nats/ is the NATS code the SDK and the service share (logging in, headers made ' +
        'once): it imports packages only, so that the SDK can carry it.',
      from: { path: '^src/nats/' },
      to: { path: '^src/', pathNot: '^src/nats/' },
    },
    {
      name: 'src-imports-no-tests',
      severity: 'error',
      comment:
        'The service never imports test code, benchmarks, examples, scripts or development ' +
        'helpers (dev/: the private nats-server of `npm start`, which dev/start.ts hands to the ' +
        'bank). The production image carries src/ only.',
      from: { path: '^src/' },
      to: { path: '^(test|bench|examples|scripts|dev)/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment:
        'An import dependency-cruiser cannot resolve is an edge the rules above cannot see; ' +
        'the type check would fail on it too.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
}
