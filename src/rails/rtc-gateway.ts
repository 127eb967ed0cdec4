import type { Logger } from '../logger.ts'
import type { ClearingHouseSimulator } from './clearing-house/simulator.ts'

// Where the bank's real-time payments (RTC) go: the clearing house's gateway, which answers
// each pacs.008 (one payment) and each pacs.028 (a status request) with a pacs.002
// (docs/operators/rails.md: "RTC: one pacs.008 per payment to the gateway over HTTPS; no status
// within the bound → Pending until one arrives, and the bank asks with pacs.028").

/** The messages the bank sends the gateway. */
export type GatewayMessage = 'pacs.008' | 'pacs.028'

export interface RtcGateway {
  /**
   * Sends a message; resolves with the answer's text (a pacs.002), or undefined when none came
   * within the bound or the gateway refused it (logged): the payment is then still Pending.
   */
  send(message: GatewayMessage, text: string): Promise<string | undefined>
}

/**
 * The gateway over HTTP(S) (BANK_RAIL_GATEWAY_URL): each message a POST of its XML
 * (`application/xml`) to the URL, the answer the body of a 200. A CA of the bank's own for the
 * gateway's certificate is given the usual way, NODE_EXTRA_CA_CERTS.
 */
export class HttpGateway implements RtcGateway {
  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
    private readonly log: Logger,
  ) {}

  async send(message: GatewayMessage, text: string): Promise<string | undefined> {
    try {
      const response = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/xml; charset=utf-8' },
        body: text,
        // Only the configured gateway answers: a redirect is no answer (the payment's data
        // never goes to an address the bank was not given).
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      })
      if (response.status === 200) {
        const body = await boundedText(response, answer_bytes_max)
        if (body !== undefined) return body
        this.log.warn({ message }, 'rail gateway: answer larger than the bound')
        return undefined
      }
      await response.body?.cancel()
      this.log.warn({ message, status: response.status }, 'rail gateway: no answer (HTTP status)')
    } catch (error) {
      this.log.warn({ message, err: (error as Error).message },
        'rail gateway: no answer in time or no connection')
    }
    return undefined
  }
}

/** The largest answer read: a status report of one payment is a few kB. */
const answer_bytes_max = 1024 * 1024

/** The body as text, or undefined (and the rest dropped) once it passes `max` bytes. */
async function boundedText(response: Response, max: number): Promise<string | undefined> {
  if (!response.body) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of response.body) {
    size += chunk.byteLength
    if (size > max) {
      await response.body.cancel().catch(() => {})
      return undefined
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** The sandbox's gateway: the clearing-house simulator answers in the bank's process. */
export class SimulatorGateway implements RtcGateway {
  constructor(private readonly simulator: ClearingHouseSimulator) {}

  send(message: GatewayMessage, text: string): Promise<string | undefined> {
    return message === 'pacs.008' ? this.simulator.answerRealTime(text)
      : this.simulator.answerStatusRequest(text)
  }
}
