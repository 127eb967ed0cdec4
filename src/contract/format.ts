// How values leave the service: timestamps as RFC 3339 in UTC, whole
// seconds written without a fraction; money as integer-cent strings. And money for people:
// rand with thousands separators (e-mails, the console).

export const zeroTimestamp = '0001-01-01T00:00:00Z'

export function formatTimestamp(at: Date): string {
  return at.toISOString().replace('.000Z', 'Z')
}

export function formatOptionalTimestamp(at: Date | null | undefined): string {
  return at ? formatTimestamp(at) : zeroTimestamp
}

/** Cents as rand for people: `R1,234.56` (`-R0.50` below zero). */
export function formatRand(cents: bigint): string {
  const negative = cents < 0n
  const abs = negative ? -cents : cents
  const rands = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  return `${negative ? '-' : ''}R${rands}.${(abs % 100n).toString().padStart(2, '0')}`
}
