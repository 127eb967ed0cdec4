// PostgreSQL and PGlite both report SQLSTATE codes on their errors.
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (typeof error !== 'object' || error === null) return false
  const e = error as { code?: unknown; constraint?: unknown; message?: unknown }
  if (e.code !== '23505') return false
  if (!constraint) return true
  return e.constraint === constraint || (typeof e.message === 'string' && e.message.includes(constraint))
}
