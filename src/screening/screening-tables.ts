import type { Generated } from 'kysely'
import type { Json, NullableTimestamp, Timestamp } from '../db/column-types.ts'
import type { DateOfBirth, EntryDocument } from './list-entry.ts'

// Kysely types of the sanctions lists the bank screens against: each load of a list (a
// version, with the list's own date), its entries, and the parts of a list file on its way
// in (`ops.screening.upload`, which `bank screening load <file>` sends).

/** One load of one list: a version. At most one of each source is active. */
export interface ScreeningListLoadsTable {
  id: string
  /** The order of the loads: newest last. */
  seq: Generated<number>
  /** `un_consolidated` or `ofac_sdn`. */
  source: string
  /** The list's own date: the UN's `dateGenerated`, OFAC's Publish_Date (YYYY-MM-DD). */
  list_date: string | null
  /** The file's SHA-256 (hex) and size. */
  sha256: string
  bytes: number
  entry_count: number
  loaded_at: Timestamp
  /** The operator's credential and its label. */
  loaded_by_credential: string
  loaded_by_label: string
  /** The upload it came from (a retried last part answers this load again). */
  upload_id: string
  active: boolean
  /** When a newer load of the same source replaced it. */
  replaced_at: NullableTimestamp
}

/** One entry of a load, as the parsers read it (list-entry.ts). */
export interface ScreeningEntriesTable {
  id: string
  load_id: string
  /** Its place in the file, from 0. */
  position: number
  list_ref: string
  /** individual, entity, vessel or aircraft. */
  kind: string
  /** Its name first, then its aliases. */
  names: Json<string[]>
  dates_of_birth: Json<DateOfBirth[]>
  documents: Json<EntryDocument[]>
  programs: Json<string[]>
}

/** One part of a list file on its way in; the parts go once the file is loaded or refused. */
export interface ScreeningUploadPartsTable {
  upload_id: string
  part: number
  parts: number
  /** The whole file's SHA-256 (hex), as each part announces it. */
  sha256: string
  content: Uint8Array
  received_at: Timestamp
}

export type ReviewSubject = 'entity' | 'user' | 'payout' | 'incoming'
export type ReviewCause = 'create' | 'update' | 'rescreen' | 'payout' | 'incoming'
export type ReviewStatus = 'open' | 'clear_pending' | 'cleared' | 'confirmed'

/** What was screened: the name, its kind and the facts that raise or lower a score. */
export interface Screened {
  name: string
  kind: 'individual' | 'entity'
  date_of_birth?: string | undefined
  id_number?: string | undefined
}

/** A hit held for an operator's decision (screening-reviews.ts). */
export interface ScreeningReviewsTable {
  id: string
  seq: Generated<string>
  partner_id: string
  /** The customer it holds: the entity itself, the user's entity, the payer's entity. */
  entity_id: string
  subject: ReviewSubject
  /** The entity, user or transaction screened. */
  subject_id: string
  cause: ReviewCause
  screened: Json<Screened[]>
  /** The hits, best first (ScreeningHit). */
  hits: Json<unknown[]>
  top_score: number
  status: ReviewStatus
  opened_at: Timestamp
  /** The first operator of a clearing that needs a second (a score above the confirm score). */
  clear_requested_by: string | null
  clear_requested_by_name: string | null
  decided_by: string | null
  decided_by_name: string | null
  decided_at: NullableTimestamp
  reason: string | null
}

export interface ScreeningTables {
  screening_reviews: ScreeningReviewsTable
  screening_list_loads: ScreeningListLoadsTable
  screening_entries: ScreeningEntriesTable
  screening_upload_parts: ScreeningUploadPartsTable
}
