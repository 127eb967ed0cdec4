import { z } from 'zod'
import packageJson from '../../package.json' with { type: 'json' }
import { errorTypes, type ErrorType } from './error-types.ts'
import { sa_id_number_rule } from './fields.ts'
import { allOperations, groupOf } from './index.ts'
import { fillSubject, placeholderNames, type Operation } from './operation.ts'

// The AsyncAPI 3.0 description of the service, built from the one endpoint table
// (`allOperations()`), so that the document cannot drift from what the service validates.
// `npm run asyncapi` writes it to docs/asyncapi.yaml; a test checks that the checked-in
// file equals a fresh build and that `@asyncapi/parser` accepts it.
//
// The document describes the bank's service, so each operation is `action: receive`: the
// service receives the request on the channel and replies on the requester's NATS inbox,
// a reply channel with `address: null` (AsyncAPI 3.0, Operation Reply Object).

type Json = Record<string, unknown>

const parameterDescriptions: Record<string, string> = {
  partner_id:
    "The caller's own partner id (a UUID). A subject naming another partner is refused with 403 " +
      "before the body is read.",
  entity_id:
    "An entity of the caller's partner (a UUID). A subject naming another partner's entity, or " +
      "no entity at all, is refused with 403.",
}

const ref = (pointer: string) => ({ $ref: pointer })

/**
 * A zod schema as an AsyncAPI Schema Object (a superset of JSON Schema draft-07, the
 * default `schemaFormat`). Requests are described as the caller writes them (`io: input`,
 * before defaults and transforms); replies as the service writes them (`io: output`).
 * Refinements that JSON Schema cannot say (country codes, ID-number check digits) are
 * left out of the schema; the service still enforces them and answers 400. Where a field's
 * rule is one (an ID number, a registration number), its `description` says it.
 */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Json {
  const converted = z.toJSONSchema(schema, { io, target: 'draft-07', unrepresentable: 'any',
    reused: 'inline' }) as Json
  const { $schema: _dialect, ...rest } = converted
  return rest
}

/** `svc.entity.<partner_id>.create` → `svc.entity.{partner_id}.create`. */
export function channelAddress(op: Operation): string {
  return fillSubject(op, (name) => `{${name}}`)
}

function channelParameters(op: Operation): Json | undefined {
  const names = placeholderNames(op)
  if (names.length === 0) return undefined
  return Object.fromEntries(
    names.map((name) => [name, { description: parameterDescriptions[name] }]))
}

function credentialText(op: Operation): string {
  if (op.permission === 'operator') {
    return 'an **operator** credential (partner and card network credentials get 403)'
  }
  if (op.permission === 'card_network') {
    return 'a **card network** credential (`cnk_…`; partner and operator credentials get 403). ' +
      'The card network is not a person: its calls write no operator audit row'
  }
  return `a partner credential with the **\`${op.permission}\`** permission (otherwise 403; ` +
    `operator and card network credentials get 403 on \`svc.\` subjects)`
}

function authorizationText(op: Operation): string {
  const credential = credentialText(op)
  return (
    `Requires ${credential}, sent in the NATS message header \`token\` ` +
    '(or `Authorization: Bearer <credential>`); a missing, malformed, expired or revoked ' +
      'credential gets 401.'
  )
}

function requestMessage(op: Operation): Json {
  return {
    name: `${op.name}_request`,
    title: `${op.name} request`,
    summary: op.summary,
    contentType: 'application/json',
    headers: ref('#/components/schemas/RequestHeaders'),
    payload: jsonSchemaOf(op.request, 'input'),
  }
}

function replyMessage(op: Operation): Json {
  return {
    name: `${op.name}_reply`,
    title: `${op.name} reply`,
    summary: `Success reply of ${op.name}.`,
    contentType: 'application/json',
    ...(op.replyHeaders ? { headers: replyHeadersSchema(op.replyHeaders) } : {}),
    payload: jsonSchemaOf(op.response, 'output'),
  }
}

/** The NATS headers a success reply may carry: values kept out of its body (`replyHeaders`). */
function replyHeadersSchema(headers: Readonly<Record<string, string>>): Json {
  return {
    type: 'object',
    properties: Object.fromEntries(
      Object.entries(headers).map(([field, header]) => [header,
        { type: 'string', description: `The reply's \`${field}\`, when it has one.` }]),
    ),
  }
}

function channelsOf(op: Operation): Json {
  const parameters = channelParameters(op)
  return {
    [op.name]: {
      address: channelAddress(op),
      title: op.name,
      description: `Requests to ${op.name}. ${op.summary}`,
      ...(parameters ? { parameters } : {}),
      messages: { request: ref(`#/components/messages/${op.name}_request`) },
    },
    [`${op.name}_reply`]: {
      address: null,
      title: `${op.name} reply`,
      description: "The requester's NATS inbox (the reply subject of the request): one reply, a success or an error.",
      messages: {
        reply: ref(`#/components/messages/${op.name}_reply`),
        error: ref('#/components/messages/ErrorReply'),
      },
    },
  }
}

function operationOf(op: Operation, group: string): Json {
  return {
    action: 'receive',
    channel: ref(`#/channels/${op.name}`),
    title: op.name,
    summary: op.summary,
    description: `${op.summary}\n\n${authorizationText(op)}`,
    security: [ref('#/components/securitySchemes/token'),
      ref('#/components/securitySchemes/bearer')],
    tags: [{ name: group }],
    messages: [ref(`#/channels/${op.name}/messages/request`)],
    reply: {
      channel: ref(`#/channels/${op.name}_reply`),
      messages: [ref(`#/channels/${op.name}_reply/messages/reply`),
        ref(`#/channels/${op.name}_reply/messages/error`)],
    },
    'x-permission': op.permission,
  }
}

export function buildAsyncApi(): Json {
  const operations = allOperations()
  const channels: Json = {}
  const messages: Json = {}
  const operationObjects: Json = {}
  for (const op of operations) {
    Object.assign(channels, channelsOf(op))
    messages[`${op.name}_request`] = requestMessage(op)
    messages[`${op.name}_reply`] = replyMessage(op)
    // The groups of the contract (`entities`, `users`, …) become the operations' tags.
    operationObjects[op.name] = operationOf(op, groupOf(op) ?? 'other')
  }
  messages.ErrorReply = errorReplyMessage()
  return {
    asyncapi: '3.0.0',
    info: info(),
    defaultContentType: 'application/json',
    servers: {
      nats: {
        host: '127.0.0.1:4222',
        protocol: 'nats',
        description:
          'The NATS server the bank is connected to (`npm start` uses this address, or starts a ' +
            'private server and writes its URL to `.data/nats-url`).',
      },
    },
    channels,
    operations: operationObjects,
    components: {
      schemas: { RequestHeaders: requestHeaders(), ErrorHeaders: errorHeaders(),
        ErrorBody: errorBody() },
      messages,
      securitySchemes: securitySchemes(),
    },
  }
}

function info(): Json {
  return {
    title: 'Partner banking service',
    version: typeof packageJson.version === 'string' ? packageJson.version : '0.1.0',
    description: [
      'Request/reply over NATS: every operation is an endpoint of one NATS micro service ' +
        '(`$SRV.PING`, `$SRV.INFO`, `$SRV.STATS`), ',
      'subscribed in a queue group. Bodies are JSON objects; unknown fields are refused with 400. ',
      'Money is integer cents (strings in replies); timestamps are RFC 3339 in UTC.\n\n',
      'Errors carry the headers `Nats-Service-Error-Code` (HTTP-style code) and ' +
        '`Nats-Service-Error` (one line) ',
      'and the body `{"error": {"code", "type", "message", "details"}}`. ',
      'A resource of another partner is answered exactly as a missing one (404).\n\n',
      'Rules the service enforces (400) that the schemas below cannot express: `country` is an ' +
        'ISO 3166 alpha-3 code; ',
      `a \`National\` \`id_number\` is ${sa_id_number_rule}; `,
      'a user with a passport needs `id_issue_expiry_date`; `email` must be a valid address; ',
      'text fields are trimmed before their length is checked; a request body is at most 64 KiB ' +
        'by default.\n\n',
      "This document is generated from the service's contract (`npm run asyncapi`).",
    ].join(''),
  }
}

function securitySchemes(): Json {
  return {
    token: {
      type: 'httpApiKey',
      name: 'token',
      in: 'header',
      description:
        'The credential in the NATS message header `token` (NATS headers are HTTP-style; nothing ' +
        'travels over HTTP). Partner credentials start with `pbk_`, operator credentials with ' +
          '`opk_`, card network credentials with `cnk_`; each is shown once when issued.',
    },
    bearer: {
      type: 'http',
      scheme: 'bearer',
      description: 'Alternatively the NATS message header `Authorization: Bearer <credential>`.',
    },
  }
}

function requestHeaders(): Json {
  return {
    type: 'object',
    description: 'NATS message headers of a request: the credential, as `token` or as `Authorization: Bearer`.',
    properties: {
      token: { type: 'string',
        description:
          'The credential, e.g. `pbk_…` (partner), `opk_…` (operator) or `cnk_…` (card network).' },
      Authorization: { type: 'string', pattern: '^Bearer\\s+\\S+$',
        description: 'Used when `token` is absent.' },
    },
    anyOf: [{ required: ['token'] }, { required: ['Authorization'] }],
  }
}

function errorHeaders(): Json {
  return {
    type: 'object',
    description: 'The NATS micro error headers, present on every error reply and only there.',
    properties: {
      'Nats-Service-Error-Code': { type: 'string', pattern: '^[45]\\d\\d$',
        description: 'The HTTP-style code, e.g. `404`.' },
      'Nats-Service-Error': { type: 'string', description: 'A one-line message.' },
    },
    required: ['Nats-Service-Error-Code', 'Nats-Service-Error'],
  }
}

// The error types and codes come from the one table (error-types.ts), so the document
// lists exactly the types the service can answer with.
const errorTypeNames = Object.keys(errorTypes) as [ErrorType, ...ErrorType[]]

const errorTypeList = Object.entries(errorTypes)
  .map(([type, entry]) => {
    const others: ReadonlyArray<{ code: number; description: string }> =
      'other_codes' in entry ? entry.other_codes : []
    const also = others.map((o) => ` ${o.code} for ${o.description}.`).join('')
    return `\`${type}\` (${entry.code}): ${entry.description}${also}`
  })
  .join('\n- ')

const errorBodySchema = z.object({
  error: z.object({
    code: z.int().min(400).max(599).describe(
      'The same code as the `Nats-Service-Error-Code` header.'),
    type: z.enum(errorTypeNames).describe(`One of:\n- ${errorTypeList}`),
    message: z.string().describe(
      'For people, not for parsing. A 500 carries only a correlation id, never internals.'),
    details: z
      .array(z.unknown())
      .describe('For a 400, one `{ "field", "message" }` per failing field (`(body)` for the ' +
        'body itself); for a `duplicate`, the key\'s field with the original\'s id (`tx_id`, ' +
        '`debit_order_id` or `bulk_payment_id`); for an `idempotency_key_reused`, each ' +
        'differing field with the original\'s id; otherwise usually empty.'),
  }),
})

function errorBody(): Json {
  return { ...jsonSchemaOf(errorBodySchema, 'output'),
    description: 'The body of every error reply.' }
}

function errorReplyMessage(): Json {
  return {
    name: 'ErrorReply',
    title: 'Error reply',
    summary: 'Any operation may answer with an error instead of its success reply.',
    contentType: 'application/json',
    headers: ref('#/components/schemas/ErrorHeaders'),
    payload: ref('#/components/schemas/ErrorBody'),
  }
}
