import { createHash, randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Caller } from '../auth/credential-store.ts'
import type { Clock } from '../clock.ts'
import { isUniqueViolation } from '../db/errors.ts'
import { Conflict, Invalid, Unprocessable } from '../errors.ts'
import type { JobRunner } from '../jobs/job-runner.ts'
import type { Logger } from '../logger.ts'
import type { Database } from '../schema.ts'
import type { EntryKind, ListEntry, ListSource } from './list-entry.ts'
import { NameIndex, type DobOutcome, type DocumentOutcome } from './name-index.ts'
import type { NameKind } from './name-tokens.ts'
import type { ScreeningTiming } from './screening-metrics.ts'
import { ListRefused, SanctionsListReader } from './sanctions-list-read.ts'
import { ScreeningStore, type IndexedEntryRow, type LoadRow } from './screening-store.ts'

// Sanctions screening: the lists' loads (versions) and the one question the bank asks of
// them, `screen`. A load replaces its source's active version in one transaction and
// enqueues the re-screening of every customer (`screening.rescreen`). Each instance keeps an
// in-memory index of the active versions (name-index.ts); `screen` reads which versions are
// active (one indexed query of a table of a few rows, at most once a second) and rebuilds
// its index when another instance loaded a list since, so every instance answers from the
// same lists within a second of a load.
//
// Customers and payments are screened through ScreeningReviews (screening-reviews.ts), which
// holds a hit for an operator's decision; the re-screening job is rescreening.ts.

export const rescreen_job_kind = 'screening.rescreen'
/** How often `screen` reads which versions are active (a load elsewhere is seen within it). */
const version_check_ms = 1_000
/**
 * Screenings remembered per index, so that a payee paid again is not screened again; when
 * full they are forgotten all at once (a new index starts empty too).
 */
const remembered_max = 20_000
/** Parts of an upload left unfinished this long are dropped when another upload starts. */
const stale_upload_ms = 24 * 60 * 60_000

export interface ScreeningSettings {
  /** A hit at or above this score puts a customer in review (BANK_SCREENING_REVIEW_SCORE). */
  reviewScore: number
  /** Above this a hit looks confirmed: clearing it needs a second operator. */
  confirmScore: number
}

export interface ScreenRequest {
  name: string
  kind: NameKind
  /** YYYY-MM-DD. */
  dateOfBirth?: string | undefined
  idNumber?: string | undefined
}

export interface ScreeningHit {
  entry_id: string
  source: ListSource
  list_ref: string
  load_id: string
  kind: EntryKind
  matched_name: string
  score: number
  name_score: number
  date_of_birth: DobOutcome
  id_number: DocumentOutcome
}

export interface LoadView {
  id: string
  source: ListSource
  list_date: string | null
  entry_count: number
  sha256: string
  bytes: number
  loaded_at: string
  loaded_by: string
  active: boolean
  replaced_at: string | null
}

export interface UploadPart {
  upload_id: string
  part: number
  parts: number
  sha256: string
  /** base64 */
  data: string
}

export interface UploadOutcome {
  status: 'receiving' | 'loaded'
  received: number
  parts: number
  load: LoadView | null
  rescreen_job_id: string | null
}

interface BuiltIndex {
  version: string
  index: NameIndex
  entries: IndexedEntryRow[]
  /** Answers given from this index, by threshold and request (see `remember`). */
  remembered: Map<string, readonly ScreeningHit[]>
}

export class ScreeningService {
  private readonly store: ScreeningStore
  private built: BuiltIndex | undefined
  private building: Promise<BuiltIndex> | undefined
  /** When the active versions were last read (performance.now()). */
  private checkedAt = Number.NEGATIVE_INFINITY

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    readonly settings: ScreeningSettings,
    private readonly jobs: JobRunner,
    private readonly log: Logger,
    private readonly timing?: ScreeningTiming,
  ) {
    this.store = new ScreeningStore(db)
  }

  /**
   * The active lists' entries whose score for the name reaches `threshold` (the review score
   * by default), best first.
   */
  async screen(request: ScreenRequest, threshold = this.settings.reviewScore)
      : Promise<readonly ScreeningHit[]> {
    const [hits] = await this.screenAll([request], threshold)
    return hits!
  }

  /**
   * `screen` for several names against one reading of the active lists (a payout's
   * recipient as a person and as a business). With no list loaded there is nothing to
   * screen against: every answer is empty and no screening is timed. A request answered
   * before from the same lists at the same threshold is answered again from memory.
   */
  async screenAll(requests: readonly ScreenRequest[], threshold = this.settings.reviewScore)
      : Promise<(readonly ScreeningHit[])[]> {
    let started = performance.now()
    const built = await this.current()
    if (built.index.size === 0) return requests.map(() => no_hits)
    return requests.map((request) => {
      const key = `${threshold}\u0000${request.kind}\u0000${request.dateOfBirth ?? ''}\u0000` +
        `${request.idNumber ?? ''}\u0000${request.name}`
      let hits = built.remembered.get(key)
      if (!hits) {
        hits = this.hitsIn(built, request, threshold)
        remember(built.remembered, key, hits)
      }
      // Each name's own time (the first one's with the version check).
      const now = performance.now()
      this.timing?.observe((now - started) / 1000)
      started = now
      return hits
    })
  }

  private hitsIn({ index, entries }: BuiltIndex, request: ScreenRequest,
      threshold: number): ScreeningHit[] {
    return index.screen(request, threshold).map((hit) => {
      const entry = entries[hit.entry]!
      return { entry_id: entry.id, source: entry.source, list_ref: entry.list_ref,
        load_id: entry.load_id, kind: entry.kind, matched_name: hit.matched_name,
        score: hit.score, name_score: hit.name_score, date_of_birth: hit.date_of_birth,
        id_number: hit.id_number }
    })
  }

  /** Builds the index now (at start), so that the first screening does not wait for it. */
  async warm(): Promise<void> {
    await this.current()
  }

  async lists(limit: number): Promise<LoadView[]> {
    return (await this.store.loads(limit)).map(loadView)
  }

  async activeLists(): Promise<LoadView[]> {
    return (await this.store.activeLoads()).map(loadView)
  }

  /** Takes one part of a list file; the last one loads it (see `load`). */
  async receivePart(part: UploadPart, caller: Caller): Promise<UploadOutcome> {
    const done = await this.store.loadOfUpload(part.upload_id)
    if (done) return { status: 'loaded', received: part.parts, parts: part.parts,
      load: loadView(done), rescreen_job_id: null }
    const content = Buffer.from(part.data, 'base64')
    if (part.part >= part.parts) throw Invalid.field('part', `must be below parts (${part.parts})`)
    if (part.part === 0) await this.store.dropStaleParts(
      new Date(this.clock.now().getTime() - stale_upload_ms))
    const held = await this.store.putPart({ upload_id: part.upload_id, part: part.part,
      parts: part.parts, sha256: part.sha256, content, received_at: this.clock.now() })
    const other = held.find((h) => h.parts !== part.parts || h.sha256 !== part.sha256)
    if (other) throw new Conflict(`upload ${part.upload_id} was begun with ${other.parts} ` +
      `parts of a file of SHA-256 ${other.sha256}; this part says ${part.parts} and ` +
      `${part.sha256}: start a new upload`)
    if (held.length < part.parts) return { status: 'receiving', received: held.length,
      parts: part.parts, load: null, rescreen_job_id: null }
    const contents = await this.store.partContents(part.upload_id)
    try {
      const loaded = await this.load(contents, { uploadId: part.upload_id, sha256: part.sha256,
        caller })
      return { status: 'loaded', received: part.parts, parts: part.parts, ...loaded }
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
      // The last part sent twice at once: the first made the load. Or another load of the
      // same list committed meanwhile: this one changed nothing and may be sent again.
      const made = await this.store.loadOfUpload(part.upload_id)
      if (made) return { status: 'loaded', received: part.parts, parts: part.parts,
        load: loadView(made), rescreen_job_id: null }
      throw new Conflict('another load of this list was made at the same time; nothing ' +
        'changed: load the file again')
    } finally {
      await this.store.dropParts(this.db, part.upload_id)
    }
  }

  /**
   * Reads a list file and loads it as its source's new active version, in one transaction
   * with the re-screening job; then rebuilds this instance's index. A file that is not one of
   * the two lists, or whose bytes do not match `sha256`, is refused and changes nothing.
   */
  async load(contents: Uint8Array[], from: { uploadId: string; sha256: string; caller: Caller })
      : Promise<{ load: LoadView; rescreen_job_id: string | null }> {
    const hash = createHash('sha256')
    for (const piece of contents) hash.update(piece)
    const digest = hash.digest('hex')
    if (digest !== from.sha256) throw Invalid.field('sha256', `the file's bytes have SHA-256 ` +
      `${digest}, not ${from.sha256}: send it again`)
    const { header, entries } = readList(contents)
    const id = randomUUID()
    const bytes = contents.reduce((sum, piece) => sum + piece.length, 0)
    const jobId = await this.db.transaction().execute(async (trx) => {
      await this.store.writeLoad(trx, { id, source: header.source, list_date: header.list_date,
        sha256: digest, bytes, loaded_at: this.clock.now(),
        loaded_by_credential: from.caller.credentialId, loaded_by_label: from.caller.label,
        upload_id: from.uploadId }, entries)
      return this.jobs.enqueue(trx, { kind: rescreen_job_kind, key: id, payload: { load_id: id } })
    })
    this.log.info({ load_id: id, source: header.source, list_date: header.list_date,
      entries: entries.length }, 'screening: list loaded')
    await this.current(true).catch((error: unknown) =>
      this.log.warn({ err: error }, 'screening: index not rebuilt; the next screening does'))
    const load = (await this.store.loadOfUpload(from.uploadId))!
    return { load: loadView(load), rescreen_job_id: jobId ?? null }
  }

  /**
   * The index of the active versions, rebuilt once when they changed. Which versions are
   * active is read again at most every `version_check_ms` (a load on this instance rebuilds
   * at once; one on another is seen here within that time).
   */
  private async current(fresh = false): Promise<BuiltIndex> {
    const now = performance.now()
    if (!fresh && this.built && now - this.checkedAt < version_check_ms) return this.built
    const version = await this.store.activeVersion()
    this.checkedAt = now
    if (this.built?.version === version) return this.built
    if (!this.building) {
      this.building = this.build(version).finally(() => { this.building = undefined })
    }
    const built = await this.building
    return built.version === version ? built : this.current(true)
  }

  private async build(version: string): Promise<BuiltIndex> {
    const started = performance.now()
    const entries = await this.store.activeEntries()
    const index = new NameIndex()
    for (const entry of entries) index.add(entry)
    this.built = { version, index, entries, remembered: new Map() }
    this.log.info({ entries: entries.length, ms: Math.round(performance.now() - started) },
      'screening: index built')
    return this.built
  }
}

const no_hits: readonly ScreeningHit[] = Object.freeze([])

/** Keeps an answer, forgetting all the others first when `remembered_max` are kept. */
function remember(remembered: Map<string, readonly ScreeningHit[]>, key: string,
    hits: readonly ScreeningHit[]): void {
  if (remembered.size >= remembered_max) remembered.clear()
  remembered.set(key, hits)
}

/** The list a file holds, read piece by piece; refused (422) when it is neither list. */
function readList(contents: Uint8Array[]) {
  const entries: ListEntry[] = []
  const reader = new SanctionsListReader((entry) => entries.push(entry))
  const decoder = new TextDecoder('utf-8', { fatal: true })
  try {
    for (const piece of contents) reader.write(decoder.decode(piece, { stream: true }))
    reader.write(decoder.decode())
    const header = reader.end()
    return { header, entries }
  } catch (error) {
    if (error instanceof ListRefused) throw new Unprocessable(`not a list the bank reads: ` +
      `${error.message}`, [{ field: 'data', message: error.message }])
    if (error instanceof TypeError) throw new Unprocessable('the file is not UTF-8 text',
      [{ field: 'data', message: 'not UTF-8 text' }])
    throw error
  }
}

function loadView(row: LoadRow): LoadView {
  return {
    id: row.id,
    source: row.source as ListSource,
    list_date: row.list_date,
    entry_count: row.entry_count,
    sha256: row.sha256,
    bytes: row.bytes,
    loaded_at: row.loaded_at.toISOString(),
    loaded_by: row.loaded_by_label,
    active: row.active,
    replaced_at: row.replaced_at?.toISOString() ?? null,
  }
}
