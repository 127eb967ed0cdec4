import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import zlib from 'node:zlib'
import { chromium, type Browser, type Page, type Request } from 'playwright-core'
import { storage } from '../support/harness.ts'

// The console's browser tests drive Debian's Chromium (`apt-get install chromium`, which
// .ci/run does) through playwright-core: browser downloads are unreachable here, so the test
// uses the system's browser and fails, naming the package, when it is missing.

export const chromium_path = process.env.BANK_TEST_CHROMIUM ?? '/usr/bin/chromium'

export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(chromium_path)) {
    throw new Error(
      `no Chromium at ${chromium_path}: install Debian's package (apt-get install -y chromium; ` +
        '.ci/run does) or set BANK_TEST_CHROMIUM to a Chromium binary',
    )
  }
  // Root (as CI runs) needs --no-sandbox; the pages are the bank's own. The rest keep
  // Chromium from reaching out to its vendor's services: on a machine without that network
  // it would wait on their names and connections, and a page (its PDF frames, the
  // accessibility check's messages to them) could stall for minutes.
  const quiet = [
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ]
  return chromium.launch({ executablePath: chromium_path, args: ['--no-sandbox', ...quiet] })
}

const axeSource = fs.readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
)

export interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: Array<{ target: unknown[] }>
}

/**
 * axe-core's serious and critical violations on the page. The script is evaluated through
 * the browser's debugging protocol, so the page's Content-Security-Policy stays as served.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource)
  const violations = (await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } })
      .axe
    return (await axe.run()).violations
  })) as AxeViolation[]
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => {
      const where = v.nodes.map((n) => JSON.stringify(n.target)).join(', ')
      return `${v.impact} ${v.id}: ${v.help} (${where})`
    })
}

// import.meta.url, not import.meta.dirname: the test runner's bundles rewrite only the former.
const docsScreenshotDir = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../docs/operators/console',
)

/**
 * Where the screenshots go: the docs' pictures with BANK_UPDATE_SCREENSHOTS=1, else a scratch
 * directory. The pages show fresh ids on every run, so writing the docs' files each time
 * would leave every `npm test` with changed files to commit.
 */
export const screenshotDir =
  process.env.BANK_UPDATE_SCREENSHOTS === '1'
    ? docsScreenshotDir
    : path.join(os.tmpdir(), 'bank-console-screenshots')

/**
 * Saves the page for the docs. One back end takes them (PGlite, which every run has), so that
 * the two back ends' processes never write the same file at once.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (storage !== 'pglite') return
  fs.mkdirSync(screenshotDir, { recursive: true })
  await page.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: true })
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(zlib.crc32(body))
  return Buffer.concat([length, body, crc])
}

/** A real PNG (an identity document stand-in): width × height, green with a dark band. */
export function realPng(width = 240, height = 150): Uint8Array {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8)
  const rows: Buffer[] = []
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3)
    const band = y > height / 3 && y < height / 2
    for (let x = 0; x < width; x++) row.set(band ? [20, 40, 30] : [120, 190, 150], 1 + x * 3)
    rows.push(row)
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  return Buffer.concat([
    signature,
    pngChunk('IHDR', header),
    pngChunk('IDAT', zlib.deflateSync(Buffer.concat(rows))),
    pngChunk('IEND', Buffer.alloc(0)),
  ])
}

/** A real one-page PDF (a proof-of-residence stand-in) showing `text`, with its xref table. */
export function realPdf(text: string): Uint8Array {
  const stream = `BT /F1 18 Tf 40 100 Td (${text.replace(/[()\\]/g, '')}) Tj ET`
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 200] /Contents 4 0 R ' +
      '/Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ]
  let out = '%PDF-1.4\n'
  const offsets: number[] = []
  objects.forEach((body, i) => {
    offsets.push(out.length)
    out += `${i + 1} 0 obj\n${body}\nendobj\n`
  })
  const xref = out.length
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return new TextEncoder().encode(out)
}

/** Signs in through the sign-in page with `token` and waits for the overview. */
export async function signIn(page: Page, base: string, token: string): Promise<void> {
  await page.goto(`${base}/sign-in`)
  await page.getByLabel('Operator credential').fill(token)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${base}/`)
}

/**
 * Keeps the page's PDFs out of Chromium's PDF viewer: the console serves each document as it
 * does to an operator's browser, and the test hands a PDF to the frame as an attachment
 * (which the headless browser saves and drops) instead of rendering it. Headless Chromium's
 * viewer, opened in four frames at once on a loaded machine, held the whole page for two
 * minutes and more (the KYB review's decision then timed out). The tests check the page:
 * that each PDF has its frame, and what the console answers. Not when the docs' screenshots
 * are made (BANK_UPDATE_SCREENSHOTS=1), which show the PDFs.
 */
export async function keepPdfsOutOfViewer(page: Page): Promise<void> {
  if (process.env.BANK_UPDATE_SCREENSHOTS === '1') return
  // Fetched with consoleFetch, not route.fetch: Playwright's own requests are Node's, which
  // resolve no `*.localhost` name.
  await page.route(/\/documents\/[0-9a-f-]{36}$/, async (route) => {
    const request = route.request()
    const response = await consoleFetch(request.url(), { headers: await request.allHeaders() })
    const headers = Object.fromEntries(response.headers)
    const body = Buffer.from(await response.arrayBuffer())
    const status = response.status
    if (headers['content-type'] !== 'application/pdf') {
      return route.fulfill({ status, headers, body })
    }
    return route.fulfill({ status, headers: { ...headers, 'content-disposition': 'attachment' },
      body })
  })
}

/** The requests of each watched page that have not finished yet, oldest first. */
const unfinished = new WeakMap<Page, Map<Request, number>>()
/** The last requests of each watched page that failed (aborted, refused), with why. */
const failedRequests = new WeakMap<Page, string[]>()

/**
 * Keeps the page's unfinished requests, so that a wait that times out can say what the
 * browser was still waiting for (a form post, or a document its frames were loading).
 */
export function watchRequests(page: Page): Page {
  const open = new Map<Request, number>()
  unfinished.set(page, open)
  page.on('request', (request) => open.set(request, Date.now()))
  page.on('requestfinished', (request) => open.delete(request))
  const failed: string[] = []
  failedRequests.set(page, failed)
  page.on('requestfailed', (request) => {
    open.delete(request)
    failed.push(`${request.method()} ${request.url()}: ${request.failure()?.errorText}`)
    if (failed.length > 10) failed.shift()
  })
  return page
}

function stillOpen(page: Page): string {
  const failed = failedRequests.get(page) ?? []
  const failures = failed.length ? `; failed requests: ${failed.join('; ')}` : ''
  const open = [...(unfinished.get(page) ?? new Map<Request, number>()).entries()]
  if (open.length === 0) return `no request unfinished${failures}`
  const now = Date.now()
  const lines = open.map(([r, at]) => `${r.method()} ${r.url()} (${now - at} ms)`)
  return `unfinished requests: ${lines.join('; ')}${failures}`
}

/**
 * Waits for the notice an action leads to. The console answers a refused or failed action
 * with an error page (`p.error`, role alert) instead: that fails the wait at once, naming
 * the page and its message, rather than after the step's whole timeout with nothing said.
 */
export async function expectNotice(page: Page, text: string | RegExp): Promise<void> {
  const notice = page.getByText(text).first()
  const error = page.locator('p.error[role="alert"]').first()
  try {
    await notice.or(error).first().waitFor()
  } catch (failure) {
    if (failure instanceof Error) failure.message += `\non ${page.url()}: ${stillOpen(page)}`
    throw failure
  }
  if (await notice.isVisible()) return
  const message = await error.innerText().catch(() => '(gone)')
  throw new Error(`expected ${String(text)} on ${page.url()}; the console said: ${message}`)
}

/** The console's host name in the tests: the default, BANK_CONSOLE_HOST_NAME unset. */
export const console_host_name = 'bank-console.localhost'

/** The console's address as an operator opens it (Chromium resolves `*.localhost` itself). */
export function consoleBase(port: number | undefined): string {
  return `http://${console_host_name}:${port}`
}

/**
 * fetch for the console, redirects never followed: Node resolves no `*.localhost` name (a
 * browser does), so a `.localhost` URL is sent to 127.0.0.1 with the URL's host as its Host
 * header; `host` sends another Host header (a wrong one, to see it refused).
 */
export async function consoleFetch(
  url: string,
  init: RequestInit & { host?: string } = {},
): Promise<Response> {
  const target = new URL(url)
  const local = target.hostname.endsWith('.localhost')
  const headers = { ...Object.fromEntries(new Headers(init.headers)),
    host: init.host ?? target.host }
  if (init.body !== undefined && init.body !== null && typeof init.body !== 'string') {
    throw new TypeError('consoleFetch sends a string body only')
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: local ? '127.0.0.1' : target.hostname, port: target.port,
      path: target.pathname + target.search, method: init.method ?? 'GET', headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('error', reject)
      res.on('end', () => {
        const answer = new Headers()
        for (const [name, value] of Object.entries(res.headers)) {
          for (const one of [value ?? []].flat()) answer.append(name, one)
        }
        const status = res.statusCode ?? 0
        const body = status === 204 || status === 304 ? null : Buffer.concat(chunks)
        resolve(new Response(body, { status, headers: answer }))
      })
    })
    req.on('error', reject)
    req.end(init.body ?? undefined)
  })
}
