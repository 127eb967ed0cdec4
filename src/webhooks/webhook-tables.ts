// Kysely types of the tables webhooks owns (src/db/schema.ts's Database extends this).
export interface WebhookTables {}
