// The compare page (stub: being built).
import { el } from './lib.js';

export async function render(main) {
  main.replaceChildren(el('h1', {}, 'compare'));
}
