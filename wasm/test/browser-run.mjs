// Serves the installed package and browser.html on loopback and loads the page in headless
// Chromium; passes when the page reports PASS. Run by scripts/test-npm.sh.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';

const pkg = path.resolve('node_modules/shangmi');
const types = { '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const file = url.pathname === '/'
    ? path.resolve('browser.html')
    : url.pathname.startsWith('/pkg/') ? path.join(pkg, url.pathname.slice(5)) : null;
  if (!file || !file.startsWith(pkg) && file !== path.resolve('browser.html') || !fs.existsSync(file)) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' });
  fs.createReadStream(file).pipe(res);
});
server.listen(0, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${server.address().port}/`;
  const chromium = process.env.CHROMIUM || 'chromium';
  const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
    '--virtual-time-budget=20000', '--dump-dom', url];
  execFile(chromium, args, { timeout: 120000, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
    server.close();
    const out = /<pre id="out">([\s\S]*?)<\/pre>/.exec(stdout)?.[1] ?? '';
    console.log(out || stdout || stderr);
    if (err || !out.startsWith('PASS')) {
      console.error(`browser test failed${err ? `: ${err.message}` : ''}`);
      process.exit(1);
    }
  });
});
