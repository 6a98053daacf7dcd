// The console's router: the page the path names renders into <main>.
// Pages are full loads (a link is a link); each page is its own module.
import { askToken, setToken, showError } from './lib.js';

const routes = [
  [/^\/ui\/$/, 'runs', () => import('./runs.js')],
  [/^\/ui\/runs\/([^/]+)$/, 'runs', () => import('./run.js')],
  [/^\/ui\/new$/, 'new', () => import('./new.js')],
  [/^\/ui\/compare$/, 'compare', () => import('./compare.js')],
];

async function main() {
  document.getElementById('token-button').addEventListener('click', async () => {
    setToken('');
    if (await askToken(false)) location.reload();
  });
  const root = document.getElementById('main');
  for (const [re, nav, load] of routes) {
    const m = location.pathname.match(re);
    if (!m) continue;
    const link = document.querySelector(`nav a[data-nav="${nav}"]`);
    if (link && location.pathname !== '/ui/runs/' + (m[1] || '')) link.setAttribute('aria-current', 'page');
    try {
      const page = await load();
      await page.render(root, { params: m.slice(1).map(decodeURIComponent), query: new URLSearchParams(location.search) });
    } catch (err) {
      showError(root, err);
    }
    // Tests (and the benchmark) wait for this: the page's first render is
    // done (its data fetched and shown; live updates may follow).
    root.dataset.ready = 'true';
    return;
  }
  showError(root, 'No such page: ' + location.pathname);
  root.dataset.ready = 'true';
}

main();
