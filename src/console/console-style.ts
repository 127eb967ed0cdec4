// The console's one style sheet, served as /console.css (the Content-Security-Policy allows
// no inline style). Colours keep a contrast of at least 4.5:1 on their backgrounds.
export const consoleCss = `
:root { font-family: system-ui, sans-serif; color: #1a1a1a; background: #fafafa; }
body { margin: 0; }
header { background: #0b3d2e; color: #fff; padding: 0.5rem 1rem; display: flex;
  align-items: center; gap: 2rem; flex-wrap: wrap; }
header a { color: #fff; }
.brand { font-weight: bold; margin: 0; }
nav { display: flex; align-items: center; gap: 1.5rem; flex: 1; }
nav ul { list-style: none; display: flex; gap: 1.25rem; margin: 0; padding: 0; }
nav a[aria-current="page"] { font-weight: bold; text-decoration-thickness: 3px; }
.sign-out { margin-left: auto; }
main { padding: 1rem 1.5rem; max-width: 72rem; }
table { border-collapse: collapse; width: 100%; margin: 0.5rem 0 1rem; background: #fff; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; }
td.amount, th.amount { text-align: right; font-variant-numeric: tabular-nums; }
code, .id { font-family: ui-monospace, monospace; font-size: 0.9em; word-break: break-all; }
.figures { display: flex; gap: 1rem; flex-wrap: wrap; list-style: none; padding: 0; }
.figures li { background: #fff; border: 1px solid #ccc; padding: 0.75rem 1rem; min-width: 10rem; }
.figures strong { display: block; font-size: 1.4rem; }
.ok { color: #0a5c2b; }
.problem { color: #a30000; }
.notice { background: #fff4d6; border: 1px solid #8a6d00; padding: 0.5rem 1rem; }
.sandbox-banner { background: #e8f1ff; border-bottom: 2px solid #1d4ed8; color: #0b1f4d;
  margin: 0; padding: 0.4rem 1rem; }
.error { background: #fde8e8; border: 1px solid #a30000; padding: 0.5rem 1rem; }
.document { background: #fff; border: 1px solid #ccc; padding: 0.75rem; margin: 0 0 1rem; }
/* A fixed box, as for a PDF's frame: a document that arrives late must not move the buttons
   under an operator's pointer (a click meant for one would land on another). */
.document img {
  display: block; width: 100%; height: 32rem; object-fit: contain; border: 1px solid #ccc;
}
.document iframe { width: 100%; height: 32rem; border: 1px solid #ccc; }
.decide { display: flex; gap: 2rem; flex-wrap: wrap; }
.decide form { background: #fff; border: 1px solid #ccc; padding: 0.75rem 1rem; }
label { display: block; margin: 0.25rem 0; }
textarea, input[type="text"], input[type="password"] { width: 100%; max-width: 32rem;
  box-sizing: border-box; padding: 0.3rem; }
button { padding: 0.35rem 0.9rem; }
.pager { display: flex; gap: 1rem; }
form.inline { display: inline-flex; gap: 0.4rem; align-items: center; margin: 0 0.3rem 0.3rem 0; }
form.inline label { margin: 0; }
form.inline input[type="text"] { width: 12rem; }
label.check { display: block; }
fieldset { border: 1px solid #ccc; margin: 0.5rem 0; }
.filters { display: flex; flex-wrap: wrap; gap: 0.25rem 0.75rem; align-items: end; }
.filters label, .filters p { margin: 0; }
.filters input[type="text"], .filters select { width: auto; min-width: 12rem; }
pre { white-space: pre-wrap; margin: 0; font-size: 0.85em; }
select { padding: 0.3rem; }
/* An account's status: the word itself, and a colour and border of its own (4.5:1 or more). */
.badge { display: inline-block; padding: 0.05rem 0.5rem; border: 1px solid; border-radius: 0.8rem;
  font-size: 0.85rem; font-weight: bold; line-height: 1.4; vertical-align: middle; }
.badge-active { background: #e6f4ea; color: #0a5c2b; border-color: #0a5c2b; }
.badge-frozen { background: #e3eefc; color: #0b3a80; border-color: #0b3a80; border-style: dashed; }
.badge-blocked { background: #fde8e8; color: #a30000; border-color: #a30000; border-width: 2px; }
.badge-dormant { background: #f0f0f0; color: #4a4a4a; border-color: #6b6b6b; border-style: dotted; }
.badge-closed { background: #333; color: #fff; border-color: #333; }
.account-status { font-size: 1.05rem; }
.pending { color: #6b4d00; }
ul.problems { margin: 0.25rem 0 0; }
.payout fieldset { max-width: 40rem; }
.payout .choice { margin-top: 0.5rem; font-weight: bold; }
`
