// Local OpenID Connect provider for the Countersign test suite. TESTS ONLY.
//
// This is a real, certified `oidc-provider` (v9) instance, configured with
// in-memory accounts, a minimal no-JavaScript login page, and test-only
// controls. It must never be used outside tests: passwords are fixtures,
// redirect URIs are accepted for any loopback port, and `/test/users/<id>`
// lets anyone rewrite accounts.
//
//   node end2end/oidc/idp.mjs         (env IDP_PORT, default 0 = free port)
//
// stdout: exactly one line, {"issuer":"http://127.0.0.1:<port>"}; logs go to
// stderr. Exits when stdin closes (parent died) or on SIGTERM.
//
// Clients (secret "test-secret", basic or post auth, code flow, PKCE S256):
//   countersign            normal
//   countersign-expired    id_token re-signed with the real key, already expired
//   countersign-wrong-key  id_token re-signed with another key under the real kid
//   countersign-public     a public client: no secret (token_endpoint_auth_method none)
// Switches (environment), to be a provider unlike this one:
//   IDP_TOKEN_AUTH_METHODS=a,b  discovery's token_endpoint_auth_methods_supported; the secret
//                               clients use the first client_secret_* of them, and with
//                               client_secret_post only, a Basic header is refused (as strict
//                               providers do; oidc-provider itself takes either)
//   IDP_NO_AUTH_TIME=1          no auth_time in ID tokens nor in discovery's claims_supported
// Test controls (outside the provider):
//   PUT /test/users/<id>   JSON {password?, email?, email_verified?, name?, groups?, claims?,
//                          userinfo_claims?, id_token_claims?} merged into (or creating) the
//                          account; 204. `claims` are sent as given, over the others, in the ID
//                          token and userinfo (a real provider's shapes: "true" strings, RFC 3339
//                          times, its own claim names); `userinfo_claims` over those in
//                          userinfo only; a null value leaves the claim out. `id_token_claims`
//                          go over the finished ID token's payload, which is signed again with
//                          the provider's key: the claims the provider sets itself (`sub`,
//                          `auth_time`, `iat`, `azp`), as a broken provider would send them
//   GET /test/users/<id>   the account as JSON (404 if unknown)
//   GET /test/token-auth   {"method"}: how the last token request authenticated
//                          (client_secret_basic, client_secret_post or none)
import * as crypto from 'node:crypto';
import * as http from 'node:http';

import { Provider } from 'oidc-provider';
import { SignJWT, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';

// oidc-provider prints its notices with console.info; keep stdout for the issuer line.
console.log = console.info = (...args) => console.error(...args);

const SECRET = 'test-secret';
const SCOPES = ['openid', 'profile', 'email', 'groups'];
const CLAIMS = {
  openid: ['sub'],
  // Besides the standard claims, the ones real providers add (docs/sign-in.md, "Claim shapes"),
  // so that `claims` can send them: Entra ID's oid/tid/ver, Google's hd, Cognito's and Auth0's own.
  profile: [
    'name', 'preferred_username', 'given_name', 'family_name', 'nickname', 'picture', 'locale', 'zoneinfo',
    'updated_at', 'oid', 'tid', 'ver', 'hd', 'cognito:username', 'username',
  ],
  email: ['email', 'email_verified'],
  groups: ['groups', 'cognito:groups', 'https://countersign.example/groups'],
};
const ALL_CLAIMS = Object.values(CLAIMS).flat();
const USER_FIELDS = ['password', 'email', 'email_verified', 'name', 'groups', 'claims', 'userinfo_claims', 'id_token_claims'];

const AUTH_METHODS = process.env.IDP_TOKEN_AUTH_METHODS?.split(',').map((m) => m.trim()).filter(Boolean);
const SECRET_AUTH = AUTH_METHODS?.find((m) => m.startsWith('client_secret_')) ?? 'client_secret_basic';
// A provider that lists client_secret_post and not basic refuses a Basic header (oidc-provider
// itself takes either).
const POST_ONLY = Boolean(AUTH_METHODS?.includes('client_secret_post') && !AUTH_METHODS.includes('client_secret_basic'));
const NO_AUTH_TIME = process.env.IDP_NO_AUTH_TIME === '1';
let lastTokenAuth = null;

const users = new Map(Object.entries({
  alice: { password: 'alice-pw', email: 'alice@example.com', email_verified: true, name: 'Alice Example', groups: ['cs-finance', 'staff'] },
  bob: { password: 'bob-pw', email: 'bob@example.com', groups: ['countersign-admins'] },
  carol: { password: 'carol-pw', email: 'carol@example.com', groups: [] },
}));

// The provider's signing key is ours, so the middleware below can re-sign with it.
const KID = 'test-idp-rs256';
const signing = await generateKeyPair('RS256', { extractable: true });
const signingJwk = { ...(await exportJWK(signing.privateKey)), kid: KID, alg: 'RS256', use: 'sig' };
const wrongKey = (await generateKeyPair('RS256')).privateKey;

const port = Number(process.env.IDP_PORT || 0);
const server = http.createServer();
await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const client = (client_id) => ({
  client_id,
  client_secret: SECRET,
  grant_types: ['authorization_code'],
  response_types: ['code'],
  token_endpoint_auth_method: SECRET_AUTH, // the other client_secret_* is accepted too, unless strict (below)
  redirect_uris: ['http://127.0.0.1:1/auth/oidc/callback'], // placeholder, see overrides below
  post_logout_redirect_uris: ['http://127.0.0.1:1/'],
});
const clients = ['countersign', 'countersign-expired', 'countersign-wrong-key'].map(client);
if (!AUTH_METHODS || AUTH_METHODS.includes('none')) {
  const { client_secret: _none, ...rest } = client('countersign-public');
  clients.push({ ...rest, token_endpoint_auth_method: 'none' });
}

const provider = new Provider(issuer, {
  clients,
  ...(AUTH_METHODS ? { clientAuthMethods: AUTH_METHODS } : {}),
  jwks: { keys: [signingJwk] },
  cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
  scopes: SCOPES,
  claims: CLAIMS,
  conformIdTokenClaims: false, // scope claims go into the ID token too, not only /me
  pkce: { required: () => true }, // S256 is the only method oidc-provider 9 supports
  features: {
    devInteractions: { enabled: false },
    rpInitiatedLogout: { enabled: true, logoutSource },
  },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  ttl: { IdToken: 60 * 60, Session: 24 * 60 * 60 },
  async findAccount(ctx, id) {
    if (!users.has(id)) return undefined;
    return {
      accountId: id,
      async claims(use) {
        const u = users.get(id) ?? {};
        const all = {
          preferred_username: id, name: u.name, email: u.email,
          email_verified: u.email_verified, groups: u.groups,
          ...u.claims, ...(use === 'userinfo' ? u.userinfo_claims : {}),
          sub: id,
        };
        // null: the provider does not send the claim at all (Entra ID's email_verified).
        return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== null && value !== undefined));
      },
    };
  },
  // Skip consent: every client is granted the OIDC scopes and claims it asks for.
  async loadExistingGrant(ctx) {
    const { client: rp, account, session, result } = ctx.oidc;
    const grantId = result?.consent?.grantId || session.grantIdFor(rp.clientId);
    let grant = grantId ? await provider.Grant.find(grantId) : undefined;
    if (!grant || grant.accountId !== account.accountId) {
      grant = new provider.Grant({ accountId: account.accountId, clientId: rp.clientId });
    }
    grant.addOIDCScope([...new Set([...SCOPES, ...ctx.oidc.requestParamOIDCScopes])]);
    grant.addOIDCClaims([...new Set([...ALL_CLAIMS, ...ctx.oidc.requestParamClaims])]);
    await grant.save();
    return grant;
  },
});

// Any loopback port is fine: the Countersign server under test uses a random one.
const loopback = (value, pathOk) => {
  const url = URL.parse(value);
  return url !== null && url.protocol === 'http:' && !url.hash
    && ['127.0.0.1', 'localhost'].includes(url.hostname) && pathOk(url);
};
provider.Client.prototype.redirectUriAllowed = (uri) => loopback(uri, (u) => u.pathname === '/auth/oidc/callback' && !u.search);
provider.Client.prototype.postLogoutRedirectUriAllowed = (uri) => loopback(uri, () => true);

// How the token endpoint is authenticated: recorded for GET /test/token-auth; a Basic header is
// refused when POST_ONLY.
provider.use(async (ctx, next) => {
  if (ctx.path !== '/token' || ctx.method !== 'POST') return next();
  const basic = /^basic /i.test(ctx.headers.authorization ?? '');
  if (basic && POST_ONLY) {
    ctx.status = 401;
    ctx.body = { error: 'invalid_client', error_description: 'this provider takes the client secret in the body (client_secret_post)' };
    return undefined;
  }
  await next();
  if (ctx.status === 200) {
    const registered = ctx.oidc?.client?.clientAuthMethod;
    lastTokenAuth = basic ? 'client_secret_basic' : (registered === 'none' ? 'none' : 'client_secret_post');
  }
  return undefined;
});

// With IDP_NO_AUTH_TIME, a provider that never says when the person signed in.
provider.use(async (ctx, next) => {
  await next();
  if (NO_AUTH_TIME && ctx.oidc?.route === 'discovery' && Array.isArray(ctx.body?.claims_supported)) {
    ctx.body.claims_supported = ctx.body.claims_supported.filter((claim) => claim !== 'auth_time');
  }
});

// Broken ID tokens for the negative-test clients (and ones without auth_time, and a user's
// `id_token_claims`), rewritten after the token endpoint answered.
provider.use(async (ctx, next) => {
  await next();
  const mode = ctx.oidc?.route === 'token' && ctx.status === 200 && ctx.body?.id_token
    && ctx.oidc.client?.clientId;
  if (!mode) return;
  const payload = decodeJwt(ctx.body.id_token);
  // `sub` is the account's id here (public subjects).
  const over = users.get(payload.sub)?.id_token_claims;
  const broken = mode === 'countersign-expired' || mode === 'countersign-wrong-key';
  if (!broken && !NO_AUTH_TIME && !over) return;
  const header = decodeProtectedHeader(ctx.body.id_token);
  if (mode === 'countersign-expired') {
    const now = Math.floor(Date.now() / 1000);
    Object.assign(payload, { iat: now - 7200, exp: now - 3600 });
  }
  if (NO_AUTH_TIME) delete payload.auth_time;
  for (const [claim, value] of Object.entries(over ?? {})) {
    if (value === null) delete payload[claim];
    else payload[claim] = value;
  }
  const key = mode === 'countersign-wrong-key' ? wrongKey : signing.privateKey;
  ctx.body.id_token = await new SignJWT(payload).setProtectedHeader({ ...header, kid: KID }).sign(key);
});

provider.on('server_error', (ctx, err) => console.error('server_error', err));

const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (title, body) => `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head>
<body>${body}</body></html>`;

async function logoutSource(ctx, form) {
  // `form` is the provider's <form id="op.logoutForm"> with its xsrf field; logout=yes ends the whole OP session.
  const fields = '<input type="hidden" name="logout" value="yes"><button type="submit">Sign out</button></form>';
  ctx.type = 'html';
  ctx.body = page('Test IdP — sign out', `<h1>Signing out…</h1>${form.replace('</form>', fields)}
<script>document.forms[0].submit()</script>`);
}

function loginPage(uid, error) {
  return page('Test IdP — sign in', `<h1>Test IdP — sign in</h1>
${error ? `<p class="error">${esc(error)}</p>` : ''}
<form method="post" action="/interaction/${esc(uid)}">
<label>User name <input name="login" autocomplete="username" autofocus></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button>
</form>`);
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res, status, body, type = 'text/plain; charset=utf-8') {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

async function interaction(req, res, uid) {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid || details.prompt.name !== 'login') {
    return send(res, 400, `unexpected interaction (prompt ${details.prompt.name})`);
  }
  if (req.method === 'GET') return send(res, 200, loginPage(uid), 'text/html; charset=utf-8');
  if (req.method !== 'POST') return send(res, 405, 'method not allowed');
  const form = new URLSearchParams(await readBody(req));
  const user = users.get(form.get('login') ?? '');
  if (!user || user.password !== form.get('password')) {
    return send(res, 200, loginPage(uid, 'wrong user name or password'), 'text/html; charset=utf-8');
  }
  return provider.interactionFinished(req, res, { login: { accountId: form.get('login') } }, { mergeWithLastSubmission: false });
}

async function testUsers(req, res, id) {
  if (req.method === 'GET') {
    return users.has(id) ? send(res, 200, JSON.stringify(users.get(id)), 'application/json') : send(res, 404, 'no such user');
  }
  if (req.method !== 'PUT') return send(res, 405, 'method not allowed');
  const body = JSON.parse(await readBody(req) || '{}');
  const fields = Object.fromEntries(USER_FIELDS.filter((k) => k in body).map((k) => [k, body[k]]));
  users.set(id, { ...users.get(id), ...fields });
  res.writeHead(204).end();
}

const providerCallback = provider.callback();
server.on('request', async (req, res) => {
  const { pathname } = new URL(req.url, issuer);
  try {
    let m;
    // Browsers ask every site for an icon; a 404 would be a console error in the tests.
    if (pathname === '/favicon.ico') return send(res, 204, '');
    if ((m = pathname.match(/^\/test\/users\/([^/]+)$/))) return await testUsers(req, res, decodeURIComponent(m[1]));
    if (pathname === '/test/token-auth') return send(res, 200, JSON.stringify({ method: lastTokenAuth }), 'application/json');
    if ((m = pathname.match(/^\/interaction\/([^/]+)$/))) return await interaction(req, res, m[1]);
    return await providerCallback(req, res);
  } catch (err) {
    console.error(`${req.method} ${pathname}:`, err);
    if (!res.headersSent) send(res, err.statusCode ?? 500, `${err.name}: ${err.message}`);
  }
});

process.stdout.write(`${JSON.stringify({ issuer })}\n`);
process.stdin.on('end', () => process.exit(0)).on('close', () => process.exit(0)).resume();
process.on('SIGTERM', () => process.exit(0));
