// Environment variable names the sandbox treats specially, defined once.

export const STASHBASE_API_KEY = 'STASHBASE_API_KEY';
export const STASHBASE_HOME_VAR = 'STASHBASE_HOME';

/** Proxy variables: removed from what the agent inherits, then set by the sandbox. */
export const PROXY_VARS = [
  'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY', 'FTP_PROXY', 'GRPC_PROXY',
  'http_proxy', 'https_proxy', 'all_proxy', 'no_proxy', 'ftp_proxy', 'grpc_proxy',
] as const;

/** Variables through which tools find CA certificates; the sandbox sets them. */
export const CA_VARS = [
  'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE',
  'GIT_SSL_CAINFO', 'PIP_CERT', 'CODEX_CA_CERTIFICATE', 'DENO_CERT',
] as const;

export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The known tokens' visible prefixes: a placeholder keeps one (lib/secrets/placeholder.ts); a variable whose value begins with one is not passed. */
export const TOKEN_PREFIXES = 'github_pat_|gh[pousr]_|glpat-|sk-ant-[a-z0-9]+-|sk-proj-|sk-|xox[abposr]-|AKIA|ASIA|npm_|pypi-|hf_';

/** Names that look like they hold a credential. */
export const CREDENTIAL_NAME = /(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|SIGNING_?KEY|CREDENTIAL|AUTH(?!OR)|SESSION_?KEY|COOKIE|JWT|CONNECTION_?STRING|WEBHOOK|KEYFILE|_PAT(_|$)|^PAT_|_KEY$|^KEY$|_PASS$|^PASS$|_PWD$|_PW$|_DSN$|^DSN$|^BW_SESSION$|^OP_SESSION_|^KRB5CCNAME$)/i;

/** A URL that carries a password in its userinfo (postgres://u:password@db, https://x:token@host). */
export const URL_WITH_PASSWORD = /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/@:]*:[^\s/@]+@/;

/**
 * A value that is a credential whatever its name: a URL whose user is a token
 * (https://ghp_…@github.com), a known token's prefix (where a word starts: a
 * header in a value, "Authorization: token ghp_…", found in review), an
 * HTTP authorization's credentials, a private key, a connection string's key or
 * password.
 */
export const CREDENTIAL_VALUE = new RegExp(`[A-Za-z][A-Za-z0-9+.-]*:\\/\\/[A-Za-z0-9_-]{20,}@|(^|[\\s"'=:,;(])(${TOKEN_PREFIXES})[A-Za-z0-9_-]{8,}|(^|\\s)AKIA[A-Z0-9]{16}|-----BEGIN [A-Z ]*PRIVATE KEY-----|(^|;)\\s*(AccountKey|SharedAccessKey|Password|Pwd)=|\\b(Bearer|Basic|token)\\s+[A-Za-z0-9._~+/=-]{16,}`, 'i');
