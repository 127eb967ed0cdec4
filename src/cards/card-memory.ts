import { sql, type Kysely, type RawBuilder } from 'kysely'
import { arrayParameter, unnestRows } from '../db/speed/arrays.ts'
import type { Database } from '../schema.ts'
import type { Spend } from './card-checks.ts'
import type { CardRow } from './card-service.ts'

// What an instance remembers of the cards its authorization groups last decided: each
// card's row as the group left it (its version included) and, for a card with a day, month
// or year limit, what it had spent in that SAST day's windows. A group whose cards (and
// accounts, ledger/known-accounts.ts) are all remembered decides from these copies without
// reading or locking anything first, and its one write checks them: it raises each card's
// version only where the version is still the one remembered, and is refused whole
// (GuardFailed) unless every card's was, after which the group is decided again the usual
// way, its cards locked and read. Every change to a card or to what it has spent raises the
// version (an edit, a status, a PIN, an authorization, an increment, a reversal, a
// clearing, an expiry; card-service.ts nextVersion, lockCards), on any instance. So the
// memory is only ever a guess the database confirms: it can cost a group a second try,
// never a limit passed or a frozen card used.

/** A remembered card: its row, and its spending where it has window limits. */
export interface RememberedCard {
  card: CardRow
  /** What it had spent in the windows of `day` (undefined: no window limit to check). */
  spend: Spend | undefined
  /** The SAST date whose day, month and year windows `spend` counts. */
  day: string
}

/** How many cards an instance remembers at most; past it, the longest unused are forgotten. */
export const card_memory_max = 100_000

export class CardMemory {
  private readonly cards = new Map<string, RememberedCard>()

  constructor(private readonly max = card_memory_max) {}

  /** The account of a remembered card (the desk groups a card's authorizations by it). */
  accountOf(cardId: string): string | undefined {
    return this.cards.get(cardId)?.card.account_id
  }

  /**
   * Copies of the cards, or undefined unless every one is remembered and, where it has
   * window limits, its spending counts the windows of `day`.
   */
  take(ids: readonly string[], day: string): Map<string, RememberedCard> | undefined {
    const taken = new Map<string, RememberedCard>()
    for (const id of ids) {
      const known = this.cards.get(id)
      if (!known || (known.spend && known.day !== day)) return undefined
      taken.set(id, {
        card: { ...known.card },
        spend: known.spend && { ...known.spend },
        day: known.day,
      })
    }
    return taken
  }

  /**
   * Remembers cards as a batch leaves them, as its write goes out or once it commits. A card
   * of an older version than the one remembered is ignored: a batch that commits after the
   * next one was decided from its state must not take that back.
   */
  remember(cards: Iterable<RememberedCard>): void {
    for (const known of cards) {
      const had = this.cards.get(known.card.id)
      if (had && BigInt(had.card.version) > BigInt(known.card.version)) continue
      this.cards.delete(known.card.id)
      this.cards.set(known.card.id, known)
    }
    for (const id of this.cards.keys()) {
      if (this.cards.size <= this.max) break
      this.cards.delete(id)
    }
  }

  forget(ids: Iterable<string>): void {
    for (const id of ids) this.cards.delete(id)
  }
}

/**
 * Locks the cards in id order and raises their versions: what a change to a card, or to
 * what it has spent, does first. Answers the cards as locked, with their new versions.
 */
export async function lockCards(trx: Kysely<Database>, ids: readonly string[]): Promise<CardRow[]> {
  const sorted = [...new Set(ids)].sort()
  if (sorted.length === 0) return []
  const { rows } = await sql<CardRow>`
    with l as (
      select id from cards where id = any(${arrayParameter('uuid', sorted)}::uuid[])
      order by id for update
    )
    update cards as c set version = c.version + 1 from l where c.id = l.id
    returning c.*`.execute(trx)
  return rows
}

/**
 * The WITH query of a group's one write that raises each card's version where it is still
 * `version` (locking it), named `card_versions`; `cardsHeld` is true when every card's was.
 */
export function cardVersionGuard(cards: readonly CardRow[]): {
  query: RawBuilder<unknown>
  holds: RawBuilder<unknown>
} {
  const expected = cards.map((card) => ({ id: card.id, version: String(card.version) }))
  const source = unnestRows(
    expected,
    [
      ['id', 'uuid'],
      ['version', 'bigint'],
    ],
    'e',
  )
  return {
    query: sql`card_versions as (
      update cards as c set version = c.version + 1 from ${source}
      where c.id = e.id and c.version = e.version
      returning c.id)`,
    holds: sql`(select count(*) from card_versions) = ${cards.length}`,
  }
}
