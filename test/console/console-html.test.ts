import assert from 'node:assert/strict'
import { test } from 'node:test'
import { escapeHtml, href, html, page, rand, sast } from '../../src/console/console-html.ts'
import { isLoopback } from '../../src/console/console-server.ts'
import { sameSecret } from '../../src/console/console-sessions.ts'

// The console's rendering helpers: what a partner controls (names, filenames, reasons) is
// escaped wherever it lands; amounts in rand, times in SAST.

test('console html - values are escaped, fragments made by html are kept', () => {
  const name = `<script>alert("x")</script>&'`
  assert.equal(
    html`<p title="${name}">${name}</p>`.text,
    '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">' +
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p>',
  )
  // (The formatter lays html templates out over lines: whitespace is not compared.)
  assert.equal(
    html`<ul>
      ${['a<', html`<li>b</li>`]}
    </ul>`.text.replace(/\s+/g, ''),
    '<ul>a&lt;<li>b</li></ul>',
  )
  assert.equal(html`${undefined}${null}${false}${0}`.text, '0')
  assert.equal(escapeHtml('"\''), '&quot;&#39;')
})

test('console html - amounts in rand, times in SAST, links with their query', () => {
  assert.equal(rand('0'), 'R0.00')
  assert.equal(rand('5'), 'R0.05')
  assert.equal(rand('123456789'), 'R1,234,567.89')
  assert.equal(rand('-250'), '-R2.50')
  assert.equal(sast('2026-11-23T22:30:00Z'), '2026-11-24 00:30:00 SAST')
  assert.equal(sast(null), '')
  assert.equal(
    href('/audit', { action: 'kyc.decide', cursor: undefined, subject_id: '' }),
    '/audit?action=kyc.decide',
  )
  assert.equal(href('/kyc', {}), '/kyc')
})

test('console - loopback addresses, and secrets compared whole', () => {
  for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1'])
    assert.ok(isLoopback(host), host)
  for (const host of ['0.0.0.0', '10.0.0.1', '::', 'console.example'])
    assert.ok(!isLoopback(host), host)
  assert.ok(sameSecret('abc', 'abc'))
  assert.ok(!sameSecret('abc', 'abd'))
  assert.ok(!sameSecret('abc', 'abcd'))
  assert.ok(!sameSecret(undefined, undefined))
  assert.ok(!sameSecret('', ''))
})

test('console html - a sandbox bank\'s pages say so in a banner; a production bank\'s do not', () => {
  const frame = { title: 'Overview', csrf: 'c', body: html`<p>figures</p>` }
  const sandbox = page({ ...frame, sandbox: true })
  assert.match(sandbox, /<p class="sandbox-banner" role="status"><strong>Sandbox\.<\/strong>/)
  assert.ok(sandbox.indexOf('sandbox-banner') < sandbox.indexOf('<main>'), 'above the page')
  assert.doesNotMatch(page({ ...frame, sandbox: false }), /sandbox-banner/)
  assert.doesNotMatch(page(frame), /sandbox-banner/)
})
