import { partnerEventTypes } from '../events/event-contract.ts'
import { html, sast } from './console-html.ts'
import {
  actionForm,
  choice,
  cursorPager,
  doneAt,
  filterForm,
  idLink,
  isUuid,
  notice,
  param,
  table,
  type Column,
  type Ops,
  type PageRequest,
  type Rendered,
  type Reply,
} from './console-kit.ts'

// Webhook deliveries across partners (`ops.webhook.deliveries`), filtered by partner, state
// and event type, and a Redeliver button on each delivered or failed one
// (`ops.webhook.redeliver`: the partner's own redelivery, made on its behalf and audited as
// the operator's action).

type Delivery = Reply<Ops['webhooks']['deliveries']>['deliveries'][number]
type Endpoint = Reply<Ops['webhooks']['endpoints']>['endpoints'][number]

const delivery_states = ['', 'pending', 'delivered', 'failed'] as const
const event_types = ['', ...partnerEventTypes] as const
export const delivery_rows = 50

function outcome(d: Delivery) {
  const status = d.last_status_code === null ? '' : `HTTP ${d.last_status_code}`
  return [status, d.last_error ?? ''].filter(Boolean).join(': ')
}

function columns(csrf: string, back: string): ReadonlyArray<Column<Delivery>> {
  return [
    { label: 'Created', cell: (d) => sast(d.created_at) },
    { label: 'Event', cell: (d) => d.event_type },
    { label: 'State', cell: (d) => d.state },
    { label: 'Attempts', cell: (d) => d.attempts, amount: true },
    { label: 'Last attempt', cell: (d) => sast(d.last_attempt_at) },
    { label: 'Outcome', cell: (d) => outcome(d) },
    { label: 'Partner', cell: (d) => idLink(`/partners/${d.partner_id}`, d.partner_id) },
    { label: 'Event id', cell: (d) => html`<span class="id">${d.event_id}</span>` },
    {
      label: 'Action',
      cell: (d) =>
        d.state === 'pending'
          ? 'on its way'
          : actionForm(`/webhooks/${d.event_id}/redeliver`, csrf, 'Redeliver', { back }),
    },
  ]
}

/** Endpoints backed off or paused by their circuit breaker, each with a Resume button. */
function endpointColumns(csrf: string): ReadonlyArray<Column<Endpoint>> {
  return [
    { label: 'Partner', cell: (e) => idLink(`/partners/${e.partner_id}`, e.partner_id) },
    { label: 'Endpoint', cell: (e) => html`<span class="id">${e.url}</span>` },
    { label: 'State', cell: (e) => e.state.replace('_', ' ') },
    { label: 'Failures in a row', cell: (e) => e.failures, amount: true },
    { label: 'Failing since', cell: (e) => sast(e.failing_since) },
    { label: 'Until', cell: (e) => (e.state === 'paused' ? 'resumed' : sast(e.backoff_until)) },
    { label: 'Last error', cell: (e) => e.last_error ?? '' },
    {
      label: 'Action',
      cell: (e) => actionForm(`/webhooks/endpoints/${e.partner_id}/resume`, csrf, 'Resume',
        { url: e.url }),
    },
  ]
}

export const endpoint_rows = 50

export async function webhooksPage(r: PageRequest): Promise<Rendered> {
  const partnerId = param(r.url, 'partner_id')
  const state = choice(r.url, 'state', delivery_states, '')
  const eventType = choice(r.url, 'event_type', event_types, '')
  const cursor = param(r.url, 'cursor')
  const failing = await r.client.webhooks.endpoints({ limit: endpoint_rows,
    ...(isUuid(partnerId) ? { partner_id: partnerId } : {}) })
  const held = failing.endpoints.filter((e) => e.state !== 'failing')
  const list = await r.client.webhooks.deliveries({
    limit: delivery_rows,
    ...(isUuid(partnerId) ? { partner_id: partnerId } : {}),
    ...(state ? { state } : {}),
    ...(eventType ? { event_type: eventType } : {}),
    ...(cursor ? { cursor } : {}),
  })
  const filter = filterForm('/webhooks', [
    { name: 'partner_id', label: 'Partner id', value: partnerId },
    { name: 'state', label: 'State', value: state, options: delivery_states },
    { name: 'event_type', label: 'Event type', value: eventType, options: event_types },
  ])
  const params = { partner_id: partnerId, state, event_type: eventType, cursor }
  const back = r.url.pathname + r.url.search
  return {
    title: 'Webhook deliveries',
    current: '/webhooks',
    body: html`${notice(r.url)}
    <h2>Endpoints backed off or paused</h2>
    ${table(held, endpointColumns(r.csrf), 'None: every endpoint answers.')}
    <h2>Deliveries</h2>
    ${filter}
    ${table(list.deliveries, columns(r.csrf, back), 'No deliveries match.')}
    ${cursorPager('/webhooks', params, list.next_cursor)}`,
  }
}

export async function redeliver(
  r: PageRequest,
  form: URLSearchParams,
  eventId: string,
): Promise<string> {
  const { delivery } = await r.client.webhooks.redeliver({ event_id: eventId })
  // Back to the list the button was on (only a path of the console's own).
  const asked = form.get('back') ?? ''
  const back = /^\/webhooks(\?[^\s]*)?$/.test(asked)
    ? new URL(asked, 'http://console.invalid')
    : null
  const params = Object.fromEntries(back?.searchParams ?? [])
  delete params.done
  return doneAt('/webhooks', `Event ${eventId} sent again: ${delivery.state}.`, params)
}

/** Resumes a partner's backed-off or paused endpoint (`ops.webhook.resume_endpoint`). */
export async function resumeEndpoint(r: PageRequest, form: URLSearchParams,
    partnerId: string): Promise<string> {
  const url = form.get('url') ?? ''
  const reply = await r.client.webhooks.resumeEndpoint({ partner_id: partnerId,
    ...(url ? { url } : {}) })
  return doneAt('/webhooks', reply.resumed.length === 0 ? 'Nothing to resume.'
    : `Resumed ${reply.resumed.length} endpoint(s): ${reply.lanes} waiting lane(s) sent.`)
}
