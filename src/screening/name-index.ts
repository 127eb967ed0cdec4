import { jaroWinkler } from '@skyra/jaro-winkler'
import { distance } from 'fastest-levenshtein'
import type { DateOfBirth, EntryKind, ListEntry } from './list-entry.ts'
import { documentNumberKey, nameTokens, tokenKeys, type NameKind } from './name-tokens.ts'

// The in-memory index of the active lists' names: built once per set of active loads (at
// start and after a load), never a scan of the list per screening. Two levels keep it small:
// every distinct token of every name (and alias) is filed under its keys (name-tokens.ts
// tokenKeys: itself, its one-letter-less forms, its sound), and each token lists the names
// it appears in. A screening looks up its own tokens' keys, keeps the list's tokens that are
// near enough (Jaro-Winkler), and scores only the names those tokens lead to.
//
// A name's score is order-independent: each of the query's tokens is paired with at most one
// of the listed name's tokens, best pairs first (Jaro-Winkler of the two), and the score is
// how much of the query is matched (by letters), lowered a little for the listed name's
// tokens left unmatched (lists give more names than customers do: "Vladimir Putin" still
// meets "Vladimir Vladimirovich Putin"). The names written together ("Abdulrahman") compete
// with the token score where the token counts differ; a one-token query never scores high
// against a name of more. A date of birth and an ID number move the score (see adjust).

/** A list token nearer than this to a query token leads to the names it appears in. */
const token_similarity_min = 0.8
/** A list token in more names than this leads to them only when no rarer one leads anywhere. */
const frequent_token_names = 250
/** A pair of tokens less alike than this counts as unmatched in a name's score. */
const pair_similarity_min = 0.75
/** How much the listed name's unmatched tokens count against the score (0–1). */
const unmatched_listed_weight = 0.2
/** The most a one-token query scores against a listed name of more tokens. */
const lone_token_score_max = 0.75
/** Score changes for the date of birth and the ID number (see `adjust`). */
export const dob_match_bonus = 0.08
export const dob_year_bonus = 0.03
export const dob_mismatch_penalty = 0.15
export const document_match_bonus = 0.15
/** The most hits one screening answers. */
export const hits_max = 20

export interface ScreeningQuery {
  name: string
  kind: NameKind
  /** YYYY-MM-DD. */
  dateOfBirth?: string | undefined
  idNumber?: string | undefined
}

export type DobOutcome = 'match' | 'year_match' | 'mismatch' | 'not_compared'
export type DocumentOutcome = 'match' | 'not_compared' | 'no_match'

export interface IndexHit {
  /** The entry's position in the index (the caller maps it to its stored id). */
  entry: number
  score: number
  name_score: number
  matched_name: string
  date_of_birth: DobOutcome
  id_number: DocumentOutcome
}

interface NameVariant {
  entry: number
  text: string
  tokens: string[]
  joined: string
}

/** One entry as the index holds it (its names are its variants). */
interface IndexedEntry {
  kind: EntryKind
  dates: DateOfBirth[]
  documents: Set<string>
  /** Its names' variant ids. */
  variants: number[]
}

export class NameIndex {
  private readonly entries: IndexedEntry[] = []
  private readonly variants: NameVariant[] = []
  /** Distinct list tokens, by id. */
  private readonly tokens: string[] = []
  private readonly tokenIds = new Map<string, number>()
  /** Key → token ids. */
  private readonly keys = new Map<string, number[]>()
  /** Token id → variant ids. */
  private readonly postings: number[][] = []
  /** A name's letters written together → variant ids. */
  private readonly joined = new Map<string, number[]>()
  /** Document number → entry positions. */
  private readonly documentEntries = new Map<string, number[]>()

  /** Adds an entry: its position (the order of adding) is what hits name. */
  add(entry: ListEntry): number {
    const position = this.entries.length
    const documents = new Set(entry.documents.map((d) => documentNumberKey(d.number))
      .filter((n) => n.length >= 3))
    const variants: number[] = []
    this.entries.push({ kind: entry.kind, dates: entry.dates_of_birth, documents, variants })
    for (const number of documents) pushTo(this.documentEntries, number, position)
    const kind: NameKind = entry.kind === 'individual' ? 'individual' : 'entity'
    const seen = new Set<string>()
    for (const text of entry.names) {
      const tokens = nameTokens(text, kind)
      const joined = tokens.join('')
      if (tokens.length === 0 || seen.has(joined)) continue
      seen.add(joined)
      const variant = this.variants.length
      this.variants.push({ entry: position, text, tokens, joined })
      variants.push(variant)
      pushTo(this.joined, joined, variant)
      for (const token of new Set(tokens)) this.postings[this.tokenId(token)]!.push(variant)
    }
    return position
  }

  get size(): number {
    return this.entries.length
  }

  /** The entries whose names score at least `threshold` for the query, best first. */
  screen(query: ScreeningQuery, threshold: number): IndexHit[] {
    const queryTokens = nameTokens(query.name, query.kind)
    if (queryTokens.length === 0) return []
    const best = new Map<number, { variant: number; score: number }>()
    const consider = (variant: number) => {
      const v = this.variants[variant]!
      if (!kindMatches(query.kind, this.entries[v.entry]!.kind)) return
      const score = nameScore(queryTokens, v)
      const held = best.get(v.entry)
      if (!held || score > held.score) best.set(v.entry, { variant, score })
    }
    for (const variant of this.candidates(queryTokens)) consider(variant)
    const documentKey = query.idNumber === undefined ? '' : documentNumberKey(query.idNumber)
    for (const entry of this.documentEntries.get(documentKey) ?? []) {
      if (!best.has(entry)) for (const variant of this.entries[entry]!.variants) consider(variant)
    }
    const hits: IndexHit[] = []
    for (const [entry, { variant, score }] of best) {
      const hit = this.adjust(entry, this.variants[variant]!.text, score, query, documentKey)
      if (hit.score >= threshold) hits.push(hit)
    }
    return hits.sort((a, b) => b.score - a.score || a.entry - b.entry).slice(0, hits_max)
  }

  /**
   * The names the query's tokens lead to (through near list tokens) or its joined letters. A
   * list token in more than `frequent_token_names` names ("trading", "holdings") leads
   * nowhere while a rarer token of the query leads somewhere: it would hand thousands of
   * names to score, and a name it shares alone scores low anyway. It still counts in scores.
   */
  private candidates(queryTokens: string[]): Set<number> {
    const found = new Set<number>(this.joined.get(queryTokens.join('')) ?? [])
    const frequent: number[] = []
    for (const token of new Set(queryTokens)) {
      const near = new Set<number>()
      for (const key of tokenKeys(token)) {
        for (const id of this.keys.get(key) ?? []) near.add(id)
      }
      for (const id of near) {
        if (similarity(token, this.tokens[id]!) < token_similarity_min) continue
        const names = this.postings[id]!
        if (names.length > frequent_token_names) frequent.push(id)
        else for (const variant of names) found.add(variant)
      }
    }
    if (found.size === 0) {
      for (const id of frequent) for (const variant of this.postings[id]!) found.add(variant)
    }
    return found
  }

  /** The name's score moved by the date of birth and the ID number, with what moved it. */
  private adjust(entry: number, matched: string, nameScore: number, query: ScreeningQuery,
      documentKey: string): IndexHit {
    const held = this.entries[entry]!
    const dob = query.dateOfBirth === undefined ? 'not_compared'
      : compareDob(query.dateOfBirth, held.dates)
    const document: DocumentOutcome = documentKey === '' || held.documents.size === 0
      ? 'not_compared' : held.documents.has(documentKey) ? 'match' : 'no_match'
    let score = nameScore
    if (dob === 'match') score += dob_match_bonus
    if (dob === 'year_match') score += dob_year_bonus
    if (dob === 'mismatch') score -= dob_mismatch_penalty
    if (document === 'match') score += document_match_bonus
    return { entry, score: round(Math.min(1, Math.max(0, score))), name_score: round(nameScore),
      matched_name: matched, date_of_birth: dob, id_number: document }
  }

  private tokenId(token: string): number {
    const held = this.tokenIds.get(token)
    if (held !== undefined) return held
    const id = this.tokens.length
    this.tokens.push(token)
    this.tokenIds.set(token, id)
    this.postings.push([])
    for (const key of tokenKeys(token)) pushTo(this.keys, key, id)
    return id
  }
}

function pushTo<K>(map: Map<K, number[]>, key: K, value: number): void {
  const list = map.get(key)
  if (list) list.push(value)
  else map.set(key, [value])
}

function kindMatches(asked: NameKind, listed: EntryKind): boolean {
  return asked === 'individual' ? listed === 'individual' : listed !== 'individual'
}

function similarity(a: string, b: string): number {
  return a === b ? 1 : jaroWinkler(a, b)
}

function round(score: number): number {
  return Math.round(score * 1000) / 1000
}

/**
 * The query's tokens paired one to one with the listed name's, best pairs first; the share
 * of the query's letters matched (each pair by its similarity), times a factor that the
 * listed name's unmatched letters lower by at most `unmatched_listed_weight`. The names
 * written together compete where the two have not as many tokens (a name split or joined).
 */
export function nameScore(queryTokens: string[], variant: { tokens: string[]; joined: string })
    : number {
  const listed = variant.tokens
  const pairs: Array<{ q: number; l: number; s: number }> = []
  for (let q = 0; q < queryTokens.length; q++) {
    for (let l = 0; l < listed.length; l++) {
      const s = similarity(queryTokens[q]!, listed[l]!)
      if (s >= pair_similarity_min) pairs.push({ q, l, s })
    }
  }
  pairs.sort((a, b) => b.s - a.s)
  const usedQ = new Set<number>()
  const usedL = new Set<number>()
  let queryMatched = 0
  let listedMatched = 0
  for (const { q, l, s } of pairs) {
    if (usedQ.has(q) || usedL.has(l)) continue
    usedQ.add(q)
    usedL.add(l)
    queryMatched += s * queryTokens[q]!.length
    listedMatched += s * listed[l]!.length
  }
  const queryShare = queryMatched / letters(queryTokens)
  const listedShare = listedMatched / letters(listed)
  let tokenScore = queryShare * (1 - unmatched_listed_weight * (1 - listedShare))
  // A lone name is never enough against a name of more: "Putin" alone is not a hit.
  if (queryTokens.length === 1 && listed.length > 1) tokenScore = Math.min(tokenScore,
    lone_token_score_max)
  // Written together only where the names are split otherwise ("Abdul Rahman", "Abdulrahman"):
  // between names of as many tokens, a shared first name would lift the joined letters.
  if (queryTokens.length === listed.length) return tokenScore
  return Math.max(tokenScore, joinedSimilarity(queryTokens.join(''), variant.joined))
}

/**
 * The letters written together, by edit distance (1 less the edits per letter of the
 * longer): Jaro-Winkler's reward for a common beginning would lift any two names sharing a
 * first name.
 */
function joinedSimilarity(a: string, b: string): number {
  return 1 - distance(a, b) / Math.max(a.length, b.length)
}

function letters(tokens: string[]): number {
  return tokens.reduce((sum, t) => sum + t.length, 0)
}

/**
 * A date of birth against the entry's: the same day is a match; the year within a year or
 * range the list gives without a day is a year match; an entry with dates of birth none of
 * which fits is a mismatch; an entry without one is not compared.
 */
export function compareDob(date: string, listed: readonly DateOfBirth[]): DobOutcome {
  if (listed.length === 0) return 'not_compared'
  if (listed.some((d) => d.date === date)) return 'match'
  const year = Number(date.slice(0, 4))
  if (listed.some((d) => d.date === null && d.year_from <= year && year <= d.year_to)) {
    return 'year_match'
  }
  return 'mismatch'
}
