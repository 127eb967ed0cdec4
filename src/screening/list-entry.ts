// One entry of a sanctions list as the bank keeps it, whichever list it came from: what the
// parsers make (sanctions-list-read.ts), the store keeps (screening_entries) and the index
// matches (name-index.ts).

/** The lists the bank reads: the UN Security Council's consolidated list, OFAC's SDN list. */
export const list_sources = ['un_consolidated', 'ofac_sdn'] as const
export type ListSource = (typeof list_sources)[number]

/** An entry's kind: OFAC lists vessels and aircraft too (screened as entities). */
export const entry_kinds = ['individual', 'entity', 'vessel', 'aircraft'] as const
export type EntryKind = (typeof entry_kinds)[number]

/** A date of birth as a list gives it: a whole date, a year, or a range of years. */
export interface DateOfBirth {
  /** YYYY-MM-DD when the list gives the day; null otherwise. */
  date: string | null
  year_from: number
  year_to: number
}

/** An identity document the list names (passport, national id, registration number). */
export interface EntryDocument {
  type: string
  number: string
  country: string | null
}

export interface ListEntry {
  /** The list's own reference: UN `REFERENCE_NUMBER` (e.g. QDi.001), OFAC `uid`. */
  list_ref: string
  kind: EntryKind
  /** The entry's name first, then its aliases (a.k.a., f.k.a., names in original script). */
  names: string[]
  dates_of_birth: DateOfBirth[]
  documents: EntryDocument[]
  /** The sanctions programmes or regimes (UN list type, OFAC programs). */
  programs: string[]
}
