import assert from 'node:assert/strict'
import { headers as natsHeaders } from '@nats-io/transport-node'
import type { TestBank, TestPartner } from '../support/harness.ts'
import { jacksonWrite, replyProblems, type Inclusion, type RecordValues } from './jackson.ts'
import type { JacksonBridge } from './java-bridge.ts'
import { sdkMethods, type RecordName, type SdkMethod } from './sdk-records.ts'

// A stand-in for the reference SDK's services: it writes a request record as Jackson does,
// sends it on the method's subject with the partner's token in header `token`, and treats
// the reply as the SDK does — a `Nats-Service-Error-Code` header is an error (the body is not
// read), anything else is read into the method's response record, which must succeed.

/** How requests are written and replies read: by our emulation of Jackson, or by Jackson. */
export interface Codec {
  name: string
  write(record: RecordName, values: RecordValues, inclusion: Inclusion): Promise<string>
  /** Why the reply text could not be read into the record; [] when it reads. */
  read(record: RecordName, text: string): Promise<string[]>
}

export const emulatedJackson: Codec = {
  name: 'emulated Jackson',
  write: async (record, values, inclusion) => jacksonWrite(record, values, inclusion),
  read: async (record, text) => replyProblems(record, JSON.parse(text)),
}

/** Real Jackson writes and reads; the list's stricter type checks still apply on top. */
export function realJackson(bridge: JacksonBridge): Codec {
  return {
    name: 'Jackson',
    write: (record, values, inclusion) => bridge.write(record, values, inclusion),
    read: async (record, text) => {
      const jacksonError = await bridge.read(record, text)
      return [...replyProblems(record, JSON.parse(text)),
        ...(jacksonError ? [`Jackson: ${jacksonError}`] : [])]
    },
  }
}

export interface SdkReply {
  /** The `Nats-Service-Error-Code` header as a number, or 200 when there is none. */
  code: number
  headers: Record<string, string>
  text: string
  body: any
}

/** A reply's error, as the SDK's ServiceException and our error body carry it. */
export interface SdkErrorReply extends SdkReply {
  details: Array<{ field?: string; message?: string }>
}

/** Requests wait this long for a reply (the harness's rawRequest waits as long). */
const sdk_request_timeout_ms = 10_000

export class ReferenceSdk {
  constructor(
    private readonly tb: TestBank,
    readonly partner: TestPartner,
    readonly codec: Codec,
  ) {}

  subject(method: SdkMethod): string {
    return sdkMethods[method].subject.replace('<partner_id>', this.partner.partnerId)
  }

  /** The request's JSON text as the codec writes it. */
  write(method: SdkMethod, values: RecordValues, inclusion: Inclusion = 'sdk'): Promise<string> {
    return this.codec.write(sdkMethods[method].request, values, inclusion)
  }

  /**
   * Calls the method as a partner's Java code does and returns the reply body, after checking
   * that it is no error and that it reads into the response record.
   */
  async call(method: SdkMethod, values: RecordValues, inclusion: Inclusion = 'sdk'): Promise<any> {
    const reply = await this.send(method, await this.write(method, values, inclusion))
    return this.accept(method, reply)
  }

  /** As `call`, but returns the headers too. */
  async callWithHeaders(method: SdkMethod, values: RecordValues,
      inclusion: Inclusion = 'sdk'): Promise<SdkReply> {
    const reply = await this.send(method, await this.write(method, values, inclusion))
    await this.accept(method, reply)
    return reply
  }

  /** Checks a success reply against the method's response record; returns its body. */
  async accept(method: SdkMethod, reply: SdkReply): Promise<any> {
    if (reply.headers['Nats-Service-Error-Code'] !== undefined) {
      assert.fail(`${method}: the SDK would throw ` +
        `ServiceException ${reply.code} ${reply.headers['Nats-Service-Error'] ?? ''}; ` +
        `body ${reply.text}`)
    }
    const record = sdkMethods[method].response
    const problems = await this.codec.read(record, reply.text)
    assert.deepEqual(problems, [],
      `${method}: ${this.codec.name} cannot read the reply into ${record}: ${reply.text}`)
    return reply.body
  }

  /** Sends the method's request as the SDK does and returns the reply, error or not. */
  async send(method: SdkMethod, text: string): Promise<SdkReply> {
    const h = natsHeaders()
    h.set('token', this.partner.token)
    const msg = await this.partner.nc.request(this.subject(method), text,
      { timeout: sdk_request_timeout_ms, headers: h })
    const headers: Record<string, string> = {}
    for (const key of msg.headers?.keys() ?? []) headers[key] = msg.headers!.get(key)
    const replyText = new TextDecoder().decode(msg.data)
    const code = headers['Nats-Service-Error-Code']
    return { code: code === undefined ? 200 : Number(code), headers, text: replyText,
      body: replyText ? JSON.parse(replyText) : undefined }
  }

  /**
   * Sends the request and expects the error the SDK would raise: the code in header
   * `Nats-Service-Error-Code`, a message in `Nats-Service-Error`, the same code in the body.
   */
  async expectError(method: SdkMethod, text: string, code: number): Promise<SdkErrorReply> {
    const reply = await this.send(method, text)
    assert.equal(reply.headers['Nats-Service-Error-Code'], String(code),
      `${method}: expected ${code}; got ${reply.code} ${reply.text}`)
    assert.ok((reply.headers['Nats-Service-Error'] ?? '').length > 0,
      `${method}: an error carries Nats-Service-Error`)
    assert.equal(reply.body?.error?.code, code)
    return { ...reply, details: reply.body.error.details ?? [] }
  }
}

/** The detail of a 400 that names `field`; fails when there is none. */
export function detailFor(error: SdkErrorReply, field: string): {
    field?: string; message?: string } {
  const detail = error.details.find((d) => d.field === field)
  assert.ok(detail,
    `expected the 400's details to name ${field}; got ${JSON.stringify(error.details)}`)
  return detail
}
