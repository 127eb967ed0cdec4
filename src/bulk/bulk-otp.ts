import { createHmac, randomInt, timingSafeEqual } from 'node:crypto'

// One-time PINs of bulk batches (docs/guides/bulk-payments.md: 6 random digits from a CSPRNG,
// stored only as a keyed hash, bound to the batch). The hash is HMAC-SHA256 under the
// bank's OTP key over the batch's id, the PIN's number within the batch and the PIN, so a
// stored hash says nothing about the PIN to whoever reads the database without the key
// (a plain hash of six digits would be undone by trying all million), and a hash copied
// to another batch does not verify there.

export const otp_digits = 6
/** Letters and digits that cannot be mistaken for one another when read aloud or on a screen. */
const reference_alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'
export const otp_reference_length = 4

export function newOtp(): string {
  return String(randomInt(0, 10 ** otp_digits)).padStart(otp_digits, '0')
}

/** A short label the partner may show its user ("OTP 4F7K sent"): random, unrelated to the PIN. */
export function newOtpReference(): string {
  let reference = ''
  for (let i = 0; i < otp_reference_length; i++) reference +=
    reference_alphabet[randomInt(0, reference_alphabet.length)]
  return reference
}

export function otpHash(key: Buffer, batchId: string, otpNumber: number, otp: string): string {
  return createHmac('sha256', key).update(`bulk_otp\n${batchId}\n${otpNumber}\n${otp}`).digest(
    'hex')
}

/** Compares in constant time, so the time taken tells nothing about the stored hash. */
export function otpMatches(key: Buffer, batchId: string, otpNumber: number, otp: string,
    storedHash: string): boolean {
  const given = Buffer.from(otpHash(key, batchId, otpNumber, otp), 'hex')
  const stored = Buffer.from(storedHash, 'hex')
  return given.length === stored.length && timingSafeEqual(given, stored)
}

export function otpMessage(batch: { bulk_payment_id: string; otp_reference: string;
    payment_count: number; total: string; expires_at: Date }, otp: string) {
  return {
    subject: `Your one-time PIN for bulk payment ${batch.bulk_payment_id}`,
    text: [
      `Your one-time PIN is ${otp} (reference ${batch.otp_reference}).`,
      '',
      `It confirms bulk payment ${batch.bulk_payment_id}: ${batch.payment_count} ` +
      `payment(s), ${batch.total} in total plus fees.`,
      `It is valid until ${batch.expires_at.toISOString()} and can be used once.`,
      '',
      'If you did not ask for these payments, do not share this PIN: the batch is not paid ' +
      'without it.',
    ].join('\n'),
  }
}
