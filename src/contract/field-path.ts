// How a 400's `details` name a field: dotted, with an array index written `[n]` when a
// field of the element follows (`payments[3].amount`) and `.n` when the element itself is
// meant (`permissions.1`). Every refusal (the text rule, the schema) names fields so.

export function fieldName(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) => (typeof key === 'number' && i < path.length - 1 ? `[${key}]`
      : `${i > 0 ? '.' : ''}${String(key)}`))
    .join('')
}
