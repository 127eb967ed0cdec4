// PostgreSQL and PGlite both report SQLSTATE codes on their errors.
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (typeof error !== 'object' || error === null) return false
  const e = error as { code?: unknown; constraint?: unknown; message?: unknown }
  if (e.code !== '23505') return false
  if (!constraint) return true
  return e.constraint === constraint || (typeof e.message === 'string' && e.message.includes(constraint))
}

// SQLSTATEs and socket errors that mean "the database is away", not "this request is wrong":
// class 08 (connection exceptions), 57P01-57P03 (administrator, crash shutdown; cannot
// connect now: a restart), 53300 (too many connections), and the node-postgres messages
// for a socket that closed under a query or could not be opened in time.
const unavailableCodes = new Set(['57P01', '57P02', '57P03', '53300', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND'])
const unavailableMessages = [
  'Connection terminated',
  'connection error and is not queryable',
  'timeout exceeded when trying to connect',
  'Client was closed and is not queryable',
  'Connection is not open',
  // `alter database … allow_connections false`, an operator closing the database for a while.
  'is not currently accepting connections',
]

/** Whether an error means the database cannot be reached right now (a restart, a lost socket). */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown }
    if (typeof code === 'string' && (code.startsWith('08') || unavailableCodes.has(code))) return true
    if (typeof message === 'string' && unavailableMessages.some((m) => message.includes(m))) return true
    // AggregateError (a refused connection to every address) and wrapped causes.
    const inner = (e as { errors?: unknown[] }).errors?.[0] ?? (e as { cause?: unknown }).cause
    e = inner
  }
  return false
}
