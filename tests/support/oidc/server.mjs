// The OpenID provider the auth battery's `oidc` tests talk to: node `oidc-provider`, a
// certified implementation, configured from a JSON file the Python test writes, listening
// on 127.0.0.1. Its development login and consent pages stay on (no password is checked),
// which is what lets a test walk the authorization-code flow headless.
//
//   node server.mjs <config.json>
//
// config.json: {"issuer", "port", "clients": [...], "jwks": {"keys": [...]},
//               "idTokenTtl": seconds}
// It prints "ready" on stdout once it listens.
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));

const provider = new Provider(config.issuer, {
  clients: config.clients,
  jwks: config.jwks,
  ttl: { IdToken: config.idTokenTtl ?? 3600, AccessToken: 3600 },
  pkce: { required: () => false },
  features: { devInteractions: { enabled: true } },
  claims: { openid: ['sub'], email: ['email'] },
  async findAccount(ctx, accountId) {
    return {
      accountId,
      async claims() {
        return { sub: accountId, email: `${accountId}@example.com` };
      },
    };
  },
});
// The tests speak plain http on loopback; nothing here is reachable from elsewhere.
provider.on('server_error', (ctx, error) => console.error('server_error', error));

provider.listen(config.port, '127.0.0.1', () => {
  console.log('ready');
});
