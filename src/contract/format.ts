// How values leave the service: timestamps as RFC 3339 in UTC, whole
// seconds written without a fraction; money as integer-cent strings.

export const zeroTimestamp = '0001-01-01T00:00:00Z'

export function formatTimestamp(at: Date): string {
  return at.toISOString().replace('.000Z', 'Z')
}

export function formatOptionalTimestamp(at: Date | null | undefined): string {
  return at ? formatTimestamp(at) : zeroTimestamp
}
