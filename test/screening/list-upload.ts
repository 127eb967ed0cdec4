import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import type { TestBank } from '../support/harness.ts'
import type { OperatorClient } from '../../src/client/index.ts'

// The sanctions list fixtures (made-up entries in the UN's and OFAC's XML formats) and their
// upload through `ops.screening.upload`, part by part, as `bank screening load <file>` sends.

export const fixturePath = (name: string) =>
  new URL(`../fixtures/screening/${name}`, import.meta.url).pathname
export const fixture = (name: string) => fs.readFileSync(fixturePath(name))
export const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

/** Uploads a file in `parts` parts and answers the last reply. */
export async function uploadList(tb: TestBank, bytes: Buffer, parts = 3) {
  const size = Math.ceil(bytes.length / parts)
  const upload_id = randomUUID()
  const sha256 = sha(bytes)
  let reply
  for (let part = 0; part < parts; part++) {
    reply = await tb.operator.screening.upload({ upload_id, part, parts, sha256,
      data: bytes.subarray(part * size, (part + 1) * size).toString('base64') })
    assert.equal(reply.status, part === parts - 1 ? 'loaded' : 'receiving')
  }
  return { ...reply!, upload_id }
}

/**
 * Clears a review: the bank's operator asks, and when the review's score needs a second
 * operator, `checker` clears it.
 */
export async function clearReview(tb: TestBank, checker: { client: OperatorClient },
    reviewId: string, reason: string) {
  const first = await tb.operator.screening.decide({ review_id: reviewId, decision: 'clear',
    reason })
  if (first.status === 'cleared') return first
  return checker.client.screening.decide({ review_id: reviewId, decision: 'clear',
    reason: 'Agreed: a false positive' })
}
