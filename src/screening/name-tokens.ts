import anyAscii from 'any-ascii'
import { doubleMetaphone } from 'double-metaphone'

// How a name is compared: folded to ASCII (any-ascii transliterates every script, so that
// "Müller", "Мюллер" and "Muller" meet), lower-cased, split into tokens at anything but a
// letter or digit (apostrophes dropped first: "Qa'ida" is one token), and, for an entity,
// without the legal forms that say nothing of who it is ("Ltd", "LLC", "JSC"). The order of
// the tokens is kept (the joined form compares "Abdul Rahman" with "Abdulrahman") but the
// score never depends on it (name-index.ts).

/** Legal forms and joining words left out of an entity's tokens. */
const entity_noise: ReadonlySet<string> = new Set([
  'ltd', 'limited', 'llc', 'inc', 'incorporated', 'co', 'company', 'corp', 'corporation',
  'jsc', 'pjsc', 'ojsc', 'cjsc', 'gmbh', 'sa', 'ag', 'plc', 'pty', 'bv', 'the', 'of', 'and',
  'llp', 'fze', 'fzco', 'sarl', 'srl', 'spa',
])

/** The characters a name may have before it is folded (a bound on work per name). */
export const name_chars_max = 300

export type NameKind = 'individual' | 'entity'

/** A name's tokens as compared: ASCII, lower case, legal forms of an entity left out. */
export function nameTokens(name: string, kind: NameKind): string[] {
  const folded = anyAscii(name.slice(0, name_chars_max).normalize('NFKC')).toLowerCase()
  const tokens = folded.replace(/['`\u2019]/g, '').split(/[^a-z0-9]+/).filter((t) => t !== '')
  if (kind === 'individual') return tokens
  const kept = tokens.filter((t) => !entity_noise.has(t))
  return kept.length > 0 ? kept : tokens
}

/**
 * The keys under which the index files a token, and under which a query's token looks:
 * the token, each form of it with one letter left out (tokens of 4 letters or more: one typo,
 * a letter too many or too few, meets its neighbour through a shared form: the forms share
 * the tokens' own key space, so "mohamed" meets "mohammed" less one m), and its Double
 * Metaphone codes (spellings that sound alike: "Mohammed", "Muhammad").
 */
export function tokenKeys(token: string): string[] {
  const keys = [token]
  if (token.length >= 4) {
    for (let i = 0; i < token.length; i++) keys.push(token.slice(0, i) + token.slice(i + 1))
  }
  if (/^[a-z]{3,}$/.test(token)) {
    const [primary, secondary] = doubleMetaphone(token)
    // Codes of fewer than 3 letters ("KK") are shared by too many names to tell any apart.
    if (primary.length >= 3) keys.push(`~${primary}`)
    if (secondary !== primary && secondary.length >= 3) keys.push(`~${secondary}`)
  }
  return keys
}

/** An identity document's number as compared: letters and digits only, upper case. */
export function documentNumberKey(number: string): string {
  return anyAscii(number).toUpperCase().replace(/[^A-Z0-9]/g, '')
}
