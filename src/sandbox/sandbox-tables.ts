// Kysely types of the tables the sandbox owns (src/db/schema.ts's Database extends this).
export interface SandboxTables {}
