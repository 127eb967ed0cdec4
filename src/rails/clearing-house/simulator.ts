import path from 'node:path'
import fs from 'node:fs/promises'
import type { Clock } from '../../clock.ts'
import type { Logger } from '../../logger.ts'
import { MessageRefused } from '../iso20022/xml-read.ts'
import { readStatusRequest } from '../iso20022/pacs028-read.ts'
import { pacs002Text } from '../iso20022/pacs002-write.ts'
import { clearingHouseId } from './message-ids.ts'
import { not_received } from '../iso20022/reason-codes.ts'
import type { RailFolder } from '../rail-folder.ts'
import { randomInt } from 'node:crypto'
import { clearingDay, type ClearingHouse, type IncomingRequest, type SettledEntry }
  from './clearing-house.ts'
import { readPaymentReturn } from '../iso20022/pacs004-read.ts'
import { addDays, fromSast } from '../../calendar/sa-calendar.ts'

// The sandbox's clearing house at the other end of the bank's rail folders (on by default in
// the sandbox, refused in production). A pass takes each pacs.008 the bank left in
// outbound/ (moving it to its own `clearing-house/received/`), decides its payments by the
// magic recipients (decide.ts) and writes the status report (pacs.002) into inbound/; the
// returns of the payments it accepted for the "returned" recipient (pacs.004) it holds in
// `clearing-house/later/` and delivers at its next pass, as a recipient's bank sends a
// return after the payment settled. The bank reads its answers as it reads a real clearing
// house's: through the same folders, readers and records.
//
// Its ids and bytes depend only on the bank's message and the pass's time (message-ids.ts),
// so a pass cut short answers the same message again with the same file, which the bank
// applies once.
//
// What settled on the bank's settlement account (payouts accepted, returns delivered, other
// banks' credits, the credits the bank sent back) it keeps in `clearing-house/settled/<day>/`,
// one file per message; at its first pass after a day ends it writes that day's statement
// (camt.053) into inbound/, its opening balance the last statement's closing one. A day with
// nothing settled gets no statement. A statement is made at the next midnight (SAST) of its
// day, from the files of that day, so one written again is the same file.

export class ClearingHouseSimulator {
  private readonly received: string
  private readonly later: string
  private readonly refused: string
  private readonly settled: string
  private readonly statements: string

  constructor(
    private readonly folder: RailFolder,
    private readonly house: ClearingHouse,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    const own = path.join(folder.root, 'clearing-house')
    this.received = path.join(own, 'received')
    this.later = path.join(own, 'later')
    this.refused = path.join(own, 'refused')
    this.settled = path.join(own, 'settled')
    this.statements = path.join(own, 'statements')
  }

  /**
   * Answers every message waiting in outbound/; first, when `deliverHeld`, delivers the
   * returns it held back (a clearing cycle's start: returns come at the next cycle).
   */
  async pass(deliverHeld: boolean): Promise<{ answered: number; returns_delivered: number }> {
    for (const dir of [this.received, this.later, this.refused, this.settled, this.statements]) {
      await fs.mkdir(dir, { recursive: true, mode: 0o750 })
    }
    await this.writeStatements()
    const held = deliverHeld ? await this.folder.list(this.later) : []
    for (const name of held) await this.deliverReturn(name)
    let answered = 0
    for (const name of await this.folder.list(this.folder.outbound)) {
      // The bank's returns of other banks' credits: settled back (a real clearing house
      // tells the paying bank; the sandbox has none to tell).
      if (name.startsWith('pacs.004.')) await this.takeReturn(name)
      if (!name.startsWith('pacs.008.')) continue
      if (await this.answer(name)) answered++
    }
    return { answered, returns_delivered: held.length }
  }

  private async answer(name: string): Promise<boolean> {
    const now = this.clock.now()
    const file = path.join(this.folder.outbound, name)
    const answer = await this.house.answerTransfers({ file }, now).catch((error: unknown) => {
      if (error instanceof MessageRefused) return error
      throw error
    })
    if (answer instanceof MessageRefused) {
      // A real clearing house rejects a malformed file; the simulator sets it aside.
      this.log.warn({ file: name, reason: answer.message },
        'clearing-house simulator: refused an outbound file')
      await this.folder.move(this.folder.outbound, name, this.refused)
      return false
    }
    await this.book(answer.original.message_id, await collect(answer.settled()))
    await this.folder.write(this.folder.inbound, `pacs.002.${answer.status_report_id}.xml`,
      answer.statusReport())
    await this.holdReturn(await answer.paymentReturn(now))
    await this.folder.move(this.folder.outbound, name, this.received)
    return true
  }

  /** Keeps a return to deliver at the next cycle, with its entries (booked on delivery). */
  private async holdReturn(returned: { message: { message_id: string; text: string };
      settled: SettledEntry[] } | null): Promise<void> {
    if (!returned) return
    const id = returned.message.message_id
    await writeJson(this.later, `${id}.json`, returned.settled.map(entryJson))
    await this.folder.write(this.later, `pacs.004.${id}.xml`, [returned.message.text])
  }

  /** Delivers a held return into inbound/: it settles today. */
  private async deliverReturn(name: string): Promise<void> {
    const id = name.slice('pacs.004.'.length, -'.xml'.length)
    const kept = path.join(this.later, `${id}.json`)
    const entries = await readJson(kept).catch(() => [])
    const today = clearingDay(this.clock.now())
    await this.book(id, entries.map((e) => ({ ...entryOf(e), settled_on: today })))
    await this.folder.move(this.later, name, this.folder.inbound)
    await fs.rm(kept, { force: true })
  }

  /** Takes a return the bank sends of another bank's credit: it settles today. */
  private async takeReturn(name: string): Promise<void> {
    const file = path.join(this.folder.outbound, name)
    const message = await readPaymentReturn({ file }).catch((error: unknown) => {
      if (error instanceof MessageRefused) return undefined
      throw error
    })
    const today = clearingDay(this.clock.now())
    if (message) {
      await this.book(message.header.message_id, message.items.map((item) => ({
        kind: 'bank_return', message_id: message.header.message_id,
        end_to_end_id: item.original_end_to_end_id, tx_id: null, amount: item.amount,
        settled_on: today })))
    }
    await this.folder.move(this.folder.outbound, name, message ? this.received : this.refused)
  }

  /** Keeps what a message settled, under its day, until the day's statement. */
  private async book(id: string, entries: SettledEntry[]): Promise<void> {
    const day = entries[0]?.settled_on
    if (day === undefined) return
    const dir = path.join(this.settled, day)
    await fs.mkdir(dir, { recursive: true, mode: 0o750 })
    await writeJson(dir, `${id}.json`, entries.map(entryJson))
  }

  /**
   * Writes the statement of every day before today with something settled and no statement
   * yet, oldest first: each opens with the closing balance of the one before.
   */
  private async writeStatements(): Promise<void> {
    const today = clearingDay(this.clock.now())
    const days = (await fs.readdir(this.settled))
      .filter((day) => /^\d{4}-\d{2}-\d{2}$/.test(day) && day < today).sort()
    let closing = 0n
    for (const day of days) {
      const marker = path.join(this.statements, `${day}.json`)
      const written = await readJson<{ closing: string }>(marker).catch(() => undefined)
      if (written !== undefined) {
        closing = BigInt(written.closing)
        continue
      }
      const dir = path.join(this.settled, day)
      const entries: SettledEntry[] = []
      for (const name of (await fs.readdir(dir)).filter((n) => n.endsWith('.json')).sort()) {
        entries.push(...(await readJson(path.join(dir, name))).map(entryOf))
      }
      const statement = this.house.statement(day, closing, entries, fromSast(addDays(day, 1)))
      await this.folder.write(this.folder.inbound, `camt.053.${statement.message_id}.xml`,
        statement.chunks())
      await writeJson(this.statements, `${day}.json`,
        { message_id: statement.message_id, closing: String(statement.closing_balance) })
      closing = statement.closing_balance
    }
  }

  /**
   * A real-time payment (one pacs.008, the gateway's request) answered at once: its pacs.002
   * as text, or undefined for a message it refuses. The message is kept in its received/
   * folder, to answer the bank's status requests about it later.
   */
  async answerRealTime(text: string): Promise<string | undefined> {
    const now = this.clock.now()
    const answer = await this.house.answerTransfers({ content: text }, now).catch(
      (error: unknown) => {
        if (error instanceof MessageRefused) return undefined
        throw error
      })
    if (!answer) return undefined
    await fs.mkdir(this.later, { recursive: true, mode: 0o750 })
    await fs.mkdir(this.received, { recursive: true, mode: 0o750 })
    await this.folder.write(this.received, `pacs.008.${answer.original.message_id}.xml`, [text])
    await this.book(answer.original.message_id, await collect(answer.settled()))
    await this.holdReturn(await answer.paymentReturn(now))
    return joined(answer.statusReport())
  }

  /**
   * A status request (pacs.028) answered from the message it names: the same statuses
   * again. A message it never received is answered with the whole group rejected and no
   * payment's status (NOOR, "not received"): the bank then sends it again. Undefined for a
   * request it cannot read.
   */
  async answerStatusRequest(text: string): Promise<string | undefined> {
    const request = await readStatusRequest({ content: text }).catch((error: unknown) => {
      if (error instanceof MessageRefused) return undefined
      throw error
    })
    const original = request?.items[0]?.original_message_id
    if (original === undefined) return undefined
    const name = `pacs.008.${original}.xml`
    if (!/^[A-Za-z0-9-]+$/.test(original) || !(await this.folder.exists(this.received, name))) {
      return pacs002Text({
        message_id: clearingHouseId('status_report', 'not received', request!.header.message_id),
        created_at: this.clock.now(), original_message_id: original,
        group_status: 'RJCT', group_reason_code: not_received,
        group_additional_information: 'the clearing house has not received this message',
      }, [])
    }
    const answer = await this.house.answerTransfers(
      { file: path.join(this.received, name) }, this.clock.now())
    return joined(answer.statusReport())
  }

  /**
   * Another bank pays into an account of the bank (`ops.sandbox.incoming`): its pacs.008 is
   * written into inbound/, as the clearing house delivers one. Resolves with its ids.
   */
  async incoming(request: Omit<IncomingRequest, 'sequence'>):
      Promise<{ message_id: string; end_to_end_id: string }> {
    const made = await this.house.incoming({ ...request, sequence: randomInt(2 ** 47) },
      this.clock.now())
    await fs.mkdir(this.settled, { recursive: true, mode: 0o750 })
    await this.book(made.message.message_id, [made.settled])
    await this.folder.write(this.folder.inbound, `pacs.008.${made.message.message_id}.xml`,
      [made.message.text])
    return { message_id: made.message.message_id, end_to_end_id: made.end_to_end_id }
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}

/** A settled entry as the simulator keeps it (JSON: its amount as a string). */
type EntryJson = Omit<SettledEntry, 'amount'> & { amount: string }

function entryJson(entry: SettledEntry): EntryJson {
  return { ...entry, amount: String(entry.amount) }
}

function entryOf(json: EntryJson): SettledEntry {
  return { ...json, amount: BigInt(json.amount) }
}

async function readJson<T = EntryJson[]>(file: string): Promise<T> {
  return JSON.parse(await fs.readFile(file, 'utf8')) as T
}

/** Writes a JSON file whole or not at all (a temporary name, then a rename). */
async function writeJson(dir: string, name: string, value: unknown): Promise<void> {
  const temporary = path.join(dir, `.${name}.${randomInt(2 ** 47)}.tmp`)
  await fs.writeFile(temporary, JSON.stringify(value), { mode: 0o600 })
  await fs.rename(temporary, path.join(dir, name))
}

async function joined(chunks: AsyncIterable<string>): Promise<string> {
  let text = ''
  for await (const chunk of chunks) text += chunk
  return text
}
