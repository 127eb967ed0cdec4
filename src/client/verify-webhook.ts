import { Webhook, WebhookVerificationError } from 'standardwebhooks'

// For partners' receivers: checks that a webhook came from the bank and was not changed
// on the way (Standard Webhooks: HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>`,
// a timestamp within five minutes of the receiver's clock). Pass the body exactly as it
// arrived (the raw bytes or text, not parsed and re-serialised JSON). During a secret
// rotation pass both secrets: the bank signs with both for 24 hours.

export { WebhookVerificationError }

/**
 * A webhook's body: what happened, when (on the bank's clock) and the resource as its status
 * operation returns it.
 */
export interface WebhookEvent<Data = Record<string, unknown>> {
  type: string
  timestamp: string
  data: Data
}

/** Node's `IncomingHttpHeaders`, a fetch `Headers`, or a plain record. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>

const required = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const

/**
 * Verifies the webhook and returns its parsed body; throws WebhookVerificationError when
 * no given secret signed it, a header is missing, or its timestamp is too old or too new.
 */
export function verifyWebhook<Data = Record<string, unknown>>(
  headers: WebhookHeaders,
  body: string | Buffer | Uint8Array,
  secret: string | readonly string[],
): WebhookEvent<Data> {
  const secrets = typeof secret === 'string' ? [secret] : [...secret]
  if (secrets.length === 0) throw new TypeError('verifyWebhook needs at least one secret')
  const wanted: Record<string, string> = {}
  for (const name of required) {
    const value = headerValue(headers, name)
    if (value !== undefined) wanted[name] = value
  }
  const payload = typeof body === 'string' ? body : Buffer.from(body).toString('utf8')
  let failure: unknown
  for (const candidate of secrets) {
    try {
      return new Webhook(candidate).verify(payload, wanted) as WebhookEvent<Data>
    } catch (error) {
      failure = error
      // A stale or malformed header fails for every secret alike: no need to try the rest.
      if (!(error instanceof WebhookVerificationError)
        || error.message !== 'No matching signature found') break
    }
  }
  throw failure
}

function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name)
    ?? undefined
  const record = headers as Record<string, string | string[] | undefined>
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name)
  const value = key === undefined ? undefined : record[key]
  return Array.isArray(value) ? value.join(' ') : value
}
