// Chaos tests restart real processes and a PostgreSQL cluster, so they belong to the
// PostgreSQL pass of `npm test` only. This is the harness's rule (BANK_TEST_STORAGE=postgres)
// read here without loading the harness, so that on the PGlite pass a chaos file costs
// nothing: it registers no test and imports nothing else.
export const chaosPass = process.env.BANK_TEST_STORAGE === 'postgres'
