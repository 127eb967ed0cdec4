import assert from 'node:assert/strict'
import net from 'node:net'
import { after, before, test } from 'node:test'
import {
  serveConsole,
  form_bytes_max,
  type ConsoleServer,
} from '../../src/console/console-server.ts'
import { SignInThrottle, throttleKeys } from '../../src/console/console-throttle.ts'
import { onboardPartner, useTestBank, type TestPartner } from '../support/harness.ts'
import { consoleBase, consoleFetch, console_host_name, launchChromium } from './browser.ts'

// The console's edges: it answers under its own host name only (the cookie never reaches
// another service on 127.0.0.1), a form too large or holding control characters is a 4xx
// that changes nothing and logs no failure, and refused sign-ins are throttled per address
// and per credential prefix. The throttle's clock is the test's: no waiting.

const tb = useTestBank({ env: { BANK_CONSOLE_PORT: '0' } })
let partner: TestPartner
let now = 1_000_000
let server: ConsoleServer
let base: string
const logged: Array<{ level: string; obj: object; msg: string }> = []

before(async () => {
  await tb.ready
  partner = await onboardPartner(tb)
  server = await serveConsole({
    host: '127.0.0.1',
    port: 0,
    connection: tb.nc,
    timeoutMs: 120_000,
    now: () => now,
    log: {
      info: (obj, msg) => logged.push({ level: 'info', obj, msg }),
      warn: (obj, msg) => logged.push({ level: 'warn', obj, msg }),
    },
  })
  base = consoleBase(server.port)
})

after(async () => {
  await server?.close()
})

const form = (fields: Record<string, string>, cookie?: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
  body: new URLSearchParams(fields).toString(),
})

/** The sign-in page's pre-session token, and the cookie that carries it. */
async function preSession(): Promise<{ pre: string; cookie: string }> {
  const page = await consoleFetch(`${base}/sign-in`)
  const pre = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!
  return { pre, cookie: `bank_console_pre=${pre}` }
}

async function signIn(token: string): Promise<Response> {
  const { pre, cookie } = await preSession()
  return consoleFetch(`${base}/sign-in`, form({ csrf: pre, token }, cookie))
}

/** A signed-in session's cookie and CSRF token. */
async function session(): Promise<{ cookie: string; csrf: string }> {
  const answer = await signIn(tb.operatorToken)
  assert.equal(answer.status, 303)
  const set = answer.headers.getSetCookie().find((c) => c.startsWith('bank_console='))!
  const cookie = set.split(';')[0]!
  const overview = await (await consoleFetch(`${base}/`, { headers: { cookie } })).text()
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(overview)![1]! }
}

const failures = () => logged.filter((l) => /request failed/.test(l.msg))

async function suspensions(): Promise<number> {
  return (await tb.operator.audit.list({ action: 'partner.suspend' })).entries.length
}

test('console host - only its own name is answered; loopback GETs are sent there with no cookie', async () => {
  const port = tb.bank.consolePort!
  const own = await consoleFetch(`${consoleBase(port)}/sign-in`)
  assert.equal(own.status, 200)
  const pre = own.headers.getSetCookie().find((c) => c.startsWith('bank_console_pre='))!
  assert.match(pre, /; Path=\/; HttpOnly; SameSite=Strict/)
  assert.doesNotMatch(pre, /Domain=/i, 'host-only: no Domain attribute')
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
    const moved = await consoleFetch(`http://127.0.0.1:${port}/audit?action=x`, { host })
    assert.equal(moved.status, 303, host)
    assert.equal(moved.headers.get('location'),
      `http://${console_host_name}:${port}/audit?action=x`)
    assert.deepEqual(moved.headers.getSetCookie(), [], 'no cookie under a loopback address')
  }
  const posted = await consoleFetch(`http://127.0.0.1:${port}/sign-in`, {
    ...form({ csrf: 'x', token: tb.operatorToken }), host: `127.0.0.1:${port}`,
  })
  assert.equal(posted.status, 421, 'a POST to a loopback address is not redirected')
  assert.deepEqual(posted.headers.getSetCookie(), [])
  const rebound = await consoleFetch(`http://127.0.0.1:${port}/`, { host: `evil.example:${port}` })
  assert.equal(rebound.status, 421, 'another name (a DNS-rebinding page) is refused')
  assert.match(await rebound.text(), /does not answer under this host name/)
  assert.deepEqual(rebound.headers.getSetCookie(), [])
  assert.equal(await rawStatus(port, 'GET / HTTP/1.0\r\n\r\n'), 400, 'no Host header: 400')
})

/** The status line's code of a request written by hand (one with no Host header). */
async function rawStatus(port: number, request: string): Promise<number> {
  const socket = net.connect(port, '127.0.0.1')
  socket.end(request)
  let text = ''
  for await (const chunk of socket) text += String(chunk)
  return Number(/^HTTP\/1\.\d (\d{3})/.exec(text)?.[1])
}

test('console host - a browser sent to 127.0.0.1 lands on the console name; the cookie stays there', async () => {
  const port = tb.bank.consolePort!
  const browser = await launchChromium()
  try {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`http://127.0.0.1:${port}/`)
    assert.equal(page.url(), `${consoleBase(port)}/sign-in`)
    await page.getByLabel('Operator credential').fill(tb.operatorToken)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${consoleBase(port)}/`)
    const cookie = (await context.cookies()).find((c) => c.name === 'bank_console')!
    assert.equal(cookie.domain, console_host_name, 'host-only, on the console name')
    assert.deepEqual(await context.cookies(`http://127.0.0.1:${port}/`), [],
      'nothing the browser would send to another service on 127.0.0.1')
  } finally {
    await browser.close()
  }
})

test('console forms - over 16 KB is a 413, control characters a 400; nothing done, nothing failed', async () => {
  const { cookie, csrf } = await session()
  const path = `${base}/partners/${partner.partnerId}/suspend`
  const large = await consoleFetch(path,
    form({ csrf, pad: 'x'.repeat(form_bytes_max) }, cookie))
  assert.equal(large.status, 413)
  assert.match(await large.text(), /larger than the console takes \(16 KB\)/)
  const huge = await consoleFetch(path, form({ csrf, pad: 'x'.repeat(600_000) }, cookie))
  assert.equal(huge.status, 413, 'read to its end, then answered')
  const { pre, cookie: preCookie } = await preSession()
  const largeSignIn = await consoleFetch(`${base}/sign-in`,
    form({ csrf: pre, token: 'y'.repeat(form_bytes_max) }, preCookie))
  assert.equal(largeSignIn.status, 413)
  const nul = await consoleFetch(path, form({ csrf, reason: 'a\u0000b' }, cookie))
  assert.equal(nul.status, 400)
  assert.match(await nul.text(), /control character/)
  const query = await consoleFetch(`${base}/audit?action=a%0d%0ab`, { headers: { cookie } })
  assert.equal(query.status, 400, 'a control character in the query')
  for (const token of [`${tb.operatorToken}\r\nX: y`, 'two words']) {
    const refused = await signIn(token)
    assert.equal(refused.status, 400, JSON.stringify(token))
    assert.match(await refused.text(), /not an operator credential/)
  }
  const control = await signIn('a\u0001b')
  assert.equal(control.status, 400)
  assert.match(await control.text(), /control character/)
  assert.equal(await suspensions(), 0, 'the partner was not suspended')
  assert.deepEqual(failures(), [], 'nothing logged as a failure')
})

test('console sign-in - throttled after 5 refusals in 5 minutes per address, 429 with Retry-After', async () => {
  now += 10 * 60_000 // the refusals of the test before out of the throttle's window
  logged.length = 0
  const wrong = (i: number) => `opk_wrong${i}${'z'.repeat(40)}`
  for (let i = 0; i < 4; i++) assert.equal((await signIn(wrong(i))).status, 401)
  for (let i = 0; i < 3; i++) {
    assert.equal((await signIn(tb.operatorToken)).status, 303, 'a success is not counted')
  }
  assert.equal((await signIn(wrong(4))).status, 401, 'the fifth refusal')
  now += 60_000
  const throttled = await signIn(tb.operatorToken)
  assert.equal(throttled.status, 429, 'even the right credential, from this address')
  assert.equal(throttled.headers.get('retry-after'), String(4 * 60), 'the first refusal ages out')
  assert.match(await throttled.text(), /Too many refused sign-ins/)
  now += 4 * 60_000 - 1
  assert.equal((await signIn(tb.operatorToken)).status, 429, 'not yet')
  now += 1
  assert.equal((await signIn(tb.operatorToken)).status, 303, 'the window passed')
  const refusals = logged.filter((l) => l.msg === 'operator console: sign-in refused')
  assert.equal(refusals.length, 5)
  for (const l of refusals) assert.match(String((l.obj as { address: string }).address), /127\.0\.0\.1/)
  assert.equal(logged.filter((l) => l.msg === 'operator console: sign-in throttled').length, 2)
  const text = JSON.stringify(logged)
  assert.equal(text.includes('opk_wrong'), false, 'no token, nor a prefix of one, is logged')
  assert.equal(text.includes(tb.operatorToken.slice(4)), false)
})

test('console sign-in throttle - per credential prefix too, a sliding window, bounded memory', () => {
  let at = 0
  const throttle = new SignInThrottle({ refusals: 5, windowMs: 300_000, keysMax: 50 }, () => at)
  const token = `opk_${'a'.repeat(43)}`
  for (let i = 0; i < 5; i++) throttle.refuse(throttleKeys(`10.0.0.${i}`, token))
  assert.equal(throttle.waitMs(throttleKeys('10.0.0.9', token)), 300_000,
    'the same prefix from a sixth address is refused')
  assert.equal(throttle.waitMs(throttleKeys('10.0.0.9', `opk_${'b'.repeat(43)}`)), 0,
    'another credential from that address is not')
  assert.deepEqual(throttleKeys('::ffff:10.0.0.1', token),
    ['address 10.0.0.1', 'prefix opk_aaaaaaaa'], 'never the whole token')
  at = 300_000
  assert.equal(throttle.waitMs(throttleKeys('10.0.0.9', token)), 0, 'the window passed')
  for (let i = 0; i < 1000; i++) throttle.refuse([`address 10.1.${i >> 8}.${i & 255}`])
  assert.ok(throttle.size <= 50, `at most 50 keys kept (${throttle.size})`)
  for (let i = 0; i < 5; i++) throttle.refuse(['address 10.9.9.9'])
  assert.ok(throttle.waitMs(['address 10.9.9.9']) > 0, 'the newest key is kept')
})
