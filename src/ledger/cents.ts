// Money is integer cents held as bigint inside the service; the database's int8 comes back
// as a string (pg) or a bigint (PGlite), and JSON carries integers in and strings out.

export function cents(value: bigint | string | number): bigint {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) throw new Error(
    `not a whole number of cents: ${value}`)
  return BigInt(value)
}

export function centsText(value: bigint | string | number): string {
  return cents(value).toString()
}
