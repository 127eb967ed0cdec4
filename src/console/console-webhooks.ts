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

export async function webhooksPage(r: PageRequest): Promise<Rendered> {
  const partnerId = param(r.url, 'partner_id')
  const state = choice(r.url, 'state', delivery_states, '')
  const eventType = choice(r.url, 'event_type', event_types, '')
  const cursor = param(r.url, 'cursor')
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
    body: html`${notice(r.url)}${filter}
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
