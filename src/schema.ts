import type { TablesOf } from './module.ts'
import type { modules } from './modules.ts'

// The one `Database` interface that types the composition root's store: every module's tables
// (each declares them beside its code, <folder>-tables.ts, and names them in its declaration,
// <folder>-module.ts), derived from the list in src/modules.ts. A module's own code types its
// queries with its own tables (a Kysely<Database> is a Kysely of any part of it).
export type Database = TablesOf<typeof modules>
