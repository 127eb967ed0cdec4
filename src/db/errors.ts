// PostgreSQL and PGlite both report SQLSTATE codes on their errors.
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (typeof error !== 'object' || error === null) return false
  const e = error as { code?: unknown; constraint?: unknown; message?: unknown }
  if (e.code !== '23505') return false
  if (!constraint) return true
  return e.constraint === constraint || (typeof e.message === 'string'
    && e.message.includes(constraint))
}

// What means "the database cannot serve right now", not "this request is wrong" (a 503,
// never a 500; the caller may try again and the service recovers by itself):
// - SQLSTATE classes 08 (connection exceptions), 53 (insufficient resources: 53100 a full
//   disk, "could not extend file"; 53200 out of memory; 53300 too many connections; 53400
//   a configuration limit), 57 (operator intervention: 57014 a statement cancelled, by our
//   statement_timeout or an operator; 57P01-57P05 shutdowns, a restart, a dropped database)
//   and 58 (system errors: 58030 an I/O error);
// - 55P03, a lock not taken within our lock_timeout (the bank never asks for NOWAIT);
// - 25006, a write on a read-only server (a standby, met through a connection opened before
//   a failover), and 25P03, a session ended by idle_in_transaction_session_timeout;
// - the socket errors and node-postgres messages of a connection that closed under a query,
//   could not be opened in time, or whose answer did not come within query_timeout.
// Not here, and so a 500 with a correlation id: mistakes in the bank's SQL or data (classes
// 22, 23, 42, …), data corruption (XX001, XX002), and a deadlock or serialization failure
// (40P01, 40001) that escaped: the ledger's batches retry those (ledger/group-committer.ts),
// and anywhere else the bank takes its locks in one order, so one is a bug to look at.
const unavailableClasses = new Set(['08', '53', '57', '58'])
const sqlstate = /^[0-9A-Z]{5}$/
const unavailableCodes = new Set([
  ...['55P03', '25006', '25P03'],
  ...['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH'],
  ...['ENOTFOUND', 'EAI_AGAIN'],
])
const unavailableMessages = [
  'Connection terminated',
  'connection error and is not queryable',
  'timeout exceeded when trying to connect',
  'Client was closed and is not queryable',
  'Connection is not open',
  // The client-side bound of a query (query_timeout): no answer came, the connection is closed.
  'Query read timeout',
  // `alter database … allow_connections false`, an operator closing the database for a while.
  'is not currently accepting connections',
]

function unavailableCode(code: string): boolean {
  return unavailableCodes.has(code)
    || (sqlstate.test(code) && unavailableClasses.has(code.slice(0, 2)))
}

/** Whether an error means the database cannot serve right now (away, stalled, out of resources). */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown }
    if (typeof code === 'string' && unavailableCode(code)) return true
    if (typeof message === 'string'
      && unavailableMessages.some((m) => message.includes(m))) return true
    // AggregateError (a refused connection to every address) and wrapped causes.
    const inner = (e as { errors?: unknown[] }).errors?.[0] ?? (e as { cause?: unknown }).cause
    e = inner
  }
  return false
}
