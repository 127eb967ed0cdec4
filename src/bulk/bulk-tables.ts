// Kysely types of the tables bulk payments owns (src/db/schema.ts's Database extends this).
export interface BulkTables {}
