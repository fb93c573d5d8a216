// OAuth 2.1 against mdvault with real clients, as scripts/mcp-oauth.sh runs it:
//
//   node mcp_oauth_client.mjs sdk    BASE_URL
//   node mcp_oauth_client.mjs remote BASE_URL MCP_REMOTE_PROXY_JS
//
// `sdk`: the official TypeScript SDK's own OAuth client (an OAuthClientProvider handed to its
// streamable HTTP transport, and its `auth` helper) discovers the metadata from the 401,
// registers dynamically, sends the person to authorize (tests/oauth_consent.py signs in with
// headless Chromium and grants read-only access to one folder), finishes with the code and
// PKCE, calls tools inside the grant, refreshes its token through `auth`, and is refused after
// the token is revoked.
// `remote`: mcp-remote, started as a desktop client starts it with no key at all, does its own
// OAuth (its own registration, callback listener and token store); the consent is given the
// same way, and tools are then called through its stdio bridge.
//
// Each check prints `pass NAME` or `FAIL NAME: why`; the exit status is 1 if any failed.
// Environment: CONSENT_PYTHON (the venv's python with selenium), MDVAULT_KEY, REPO.

import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [mode, base, bridge] = process.argv.slice(2);
let failed = 0;
const check = (name, cond, why = '') => {
  if (cond) console.log(`pass ${name}`);
  else { failed += 1; console.log(`FAIL ${name}: ${why}`); }
};

/** Plays the person: tests/oauth_consent.py on this URL; resolves with where it ended. */
function consent(url, name) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.env.CONSENT_PYTHON, [`${process.env.REPO}/tests/oauth_consent.py`, url], {
      env: { ...process.env, OAUTH_ALLOW: 'Inbox', OAUTH_NAME: name },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '', err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`consent: ${err}`))));
  });
}

/** The text of a tool call's answer, and whether it is a refusal. */
async function tool(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  return { error: !!r.isError, text: (r.content || []).map((c) => c.text || '').join('\n') };
}

/** The checks of the grant (read-only, Inbox only), through any connected client. */
async function grantChecks(client, label) {
  const read = await tool(client, 'vault_read', { path: 'Inbox/Agent note.md' });
  check(`${label}: reads inside its folder`, !read.error && read.text.includes('zebracode'), read.text.slice(0, 200));
  const hidden = await tool(client, 'vault_read', { path: 'Private/Diary.md' });
  check(`${label}: a denied path is not there`, hidden.error, hidden.text.slice(0, 200));
  const write = await tool(client, 'vault_write', { path: 'Inbox/From agent.md', content: 'x' });
  check(`${label}: a write is refused, naming the right`, write.error && /not granted/.test(write.text), write.text.slice(0, 200));
  const grep = await tool(client, 'vault_grep', { pattern: 'zebracode' });
  check(`${label}: grep sees only its folder`, grep.text.includes('Agent note') && !grep.text.includes('Private'), grep.text.slice(0, 300));
}

/** A provider keeping everything in memory, with a callback listener of its own. */
class Provider {
  constructor(callbackPort) {
    this.port = callbackPort;
    this.saved = {};
    this.interactive = true;
    this.codes = [];
  }
  get redirectUrl() { return `http://127.0.0.1:${this.port}/oauth/callback`; }
  get clientMetadata() {
    return { client_name: 'mdvault SDK test', redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      token_endpoint_auth_method: 'none' };
  }
  state() { return 'sdk-state'; }
  clientInformation() { return this.saved.client; }
  saveClientInformation(c) { this.saved.client = c; }
  tokens() { return this.saved.tokens; }
  saveTokens(t) { this.saved.tokens = t; }
  saveCodeVerifier(v) { this.saved.verifier = v; }
  codeVerifier() { return this.saved.verifier; }
  invalidateCredentials(scope) {
    if (scope === 'all' || scope === 'tokens') delete this.saved.tokens;
    if (scope === 'all' || scope === 'client') delete this.saved.client;
  }
  async redirectToAuthorization(url) {
    this.authorizeUrl = url;
    if (!this.interactive) throw new Error('sign-in asked again (expected after revocation)');
    await consent(url.toString(), 'sdk-agent');
  }
}

async function sdk() {
  // The callback listener: the browser lands here with the code.
  let gotCode;
  const code = new Promise((resolve) => { gotCode = resolve; });
  const listener = createServer((req, res) => {
    const u = new URL(req.url, 'http://127.0.0.1');
    if (u.pathname === '/oauth/callback') gotCode({ code: u.searchParams.get('code'), state: u.searchParams.get('state') });
    res.end('done');
  });
  await new Promise((r) => listener.listen(0, '127.0.0.1', r));
  const provider = new Provider(listener.address().port);
  const url = new URL(`${base}/mcp`);
  let client = new Client({ name: 'mdvault-oauth-test', version: '1.0.0' });
  let transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  try {
    await client.connect(transport);
    check('sdk: the first connection asks for a sign-in', false, 'it connected without one');
  } catch (e) {
    check('sdk: the first connection asks for a sign-in', e instanceof UnauthorizedError, String(e));
  }
  check('sdk: it registered dynamically', !!provider.saved.client?.client_id, JSON.stringify(provider.saved.client));
  check('sdk: the authorization URL carries PKCE S256 and the resource',
    provider.authorizeUrl?.searchParams.get('code_challenge_method') === 'S256'
      && provider.authorizeUrl?.searchParams.get('resource') === `${base}/mcp`, String(provider.authorizeUrl));
  const back = await code;
  check('sdk: the callback carries a code and the state', !!back.code && back.state === 'sdk-state', JSON.stringify(back));
  await transport.finishAuth(back.code);
  check('sdk: the code is exchanged for tokens', !!provider.saved.tokens?.access_token && !!provider.saved.tokens?.refresh_token,
    JSON.stringify(provider.saved.tokens));
  client = new Client({ name: 'mdvault-oauth-test', version: '1.0.0' });
  transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await client.connect(transport);
  check('sdk: it connects with the access token', true);
  await grantChecks(client, 'sdk');

  // Refresh: `auth` with a refresh token on hand rotates the pair without the browser.
  const before = provider.saved.tokens;
  provider.interactive = false;
  const outcome = await auth(provider, { serverUrl: url });
  const after = provider.saved.tokens;
  check('sdk: auth refreshes without a sign-in', outcome === 'AUTHORIZED' && after.access_token !== before.access_token
    && after.refresh_token !== before.refresh_token, `${outcome}`);
  const again = await tool(client, 'vault_read', { path: 'Inbox/Agent note.md' });
  check('sdk: the new access token works', !again.error, again.text.slice(0, 200));

  // Revocation (RFC 7009): the next call is refused, and the refresh token is worth nothing.
  const revoked = await fetch(`${base}/oauth/revoke`, { method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: after.access_token, client_id: provider.saved.client.client_id }) });
  check('sdk: revocation answers 200', revoked.status === 200, `${revoked.status}`);
  let refused = false, why = '';
  try {
    const r = await tool(client, 'vault_read', { path: 'Inbox/Agent note.md' });
    why = `answered: ${r.text.slice(0, 100)}`;
  } catch (e) {
    refused = true;
    why = String(e);
  }
  check('sdk: after revocation it is refused and asked to sign in again', refused && /sign-in asked again|Unauthorized/i.test(why), why);
  await transport.close().catch(() => {});
  listener.close();
}

async function remote() {
  const configDir = `${process.env.HOME}/mcp-remote-auth`;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bridge, `${base}/mcp`, '--host', '127.0.0.1'],
    // BROWSER=true: mcp-remote's attempt to open a browser does nothing; the URL it prints is
    // given to the consent driver instead.
    env: { ...process.env, MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: 'true' },
    stderr: 'pipe',
  });
  let log = '';
  let consented;
  const consentDone = new Promise((resolve) => { consented = resolve; });
  transport.stderr.on('data', (d) => {
    log += d;
    const m = log.match(/(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+)/);
    if (m && !remote.started) {
      remote.started = true;
      consent(m[1], 'remote-agent').then((u) => consented(u), (e) => consented(`error ${e}`));
    }
  });
  const client = new Client({ name: 'mdvault-oauth-remote', version: '1.0.0' });
  const connected = client.connect(transport).then(() => true, (e) => `error ${e}`);
  const timeout = new Promise((r) => setTimeout(() => r('timed out after 120 s'), 120000));
  const ended = await Promise.race([connected, timeout]);
  check('remote: mcp-remote printed an authorization URL', remote.started === true, log.slice(-1500));
  const landed = remote.started ? await consentDone : '';
  check('remote: the consent reached its callback with a code', /code=/.test(landed), landed);
  check('remote: it connects after its own OAuth', ended === true, `${ended}\n${log.slice(-1500)}`);
  if (ended === true) await grantChecks(client, 'remote');
  await client.close().catch(() => {});
}

try {
  if (mode === 'sdk') await sdk();
  else if (mode === 'remote') await remote();
  else throw new Error(`unknown mode ${mode}`);
} catch (e) {
  failed += 1;
  console.log(`FAIL ${mode}: ${e.stack || e}`);
}
process.exit(failed ? 1 : 0);
