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
import type { ClearingHouse, IncomingRequest } from './clearing-house.ts'

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

export class ClearingHouseSimulator {
  private readonly received: string
  private readonly later: string
  private readonly refused: string

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
  }

  /**
   * Answers every message waiting in outbound/; first, when `deliverHeld`, delivers the
   * returns it held back (a clearing cycle's start: returns come at the next cycle).
   */
  async pass(deliverHeld: boolean): Promise<{ answered: number; returns_delivered: number }> {
    for (const dir of [this.received, this.later, this.refused]) {
      await fs.mkdir(dir, { recursive: true, mode: 0o750 })
    }
    const held = deliverHeld ? await this.folder.list(this.later) : []
    for (const name of held) await this.folder.move(this.later, name, this.folder.inbound)
    let answered = 0
    for (const name of await this.folder.list(this.folder.outbound)) {
      // The bank's returns of other banks' credits: taken (a real clearing house settles
      // them back to the paying bank; the sandbox has no paying bank to tell).
      if (name.startsWith('pacs.004.')) await this.folder.move(this.folder.outbound, name,
        this.received)
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
    await this.folder.write(this.folder.inbound, `pacs.002.${answer.status_report_id}.xml`,
      answer.statusReport())
    const returned = await answer.paymentReturn(now)
    if (returned) {
      await this.folder.write(this.later, `pacs.004.${returned.message.message_id}.xml`,
        [returned.message.text])
    }
    await this.folder.move(this.folder.outbound, name, this.received)
    return true
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
    const returned = await answer.paymentReturn(now)
    if (returned) {
      await this.folder.write(this.later, `pacs.004.${returned.message.message_id}.xml`,
        [returned.message.text])
    }
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
    await this.folder.write(this.folder.inbound, `pacs.008.${made.message.message_id}.xml`,
      [made.message.text])
    return { message_id: made.message.message_id, end_to_end_id: made.end_to_end_id }
  }
}

async function joined(chunks: AsyncIterable<string>): Promise<string> {
  let text = ''
  for await (const chunk of chunks) text += chunk
  return text
}
