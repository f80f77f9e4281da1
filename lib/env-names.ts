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

/** Names that look like they hold a credential. */
export const CREDENTIAL_NAME = /(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH(?!OR)|SESSION_?KEY|COOKIE|_PAT$|^PAT_|_KEY$|^KEY$)/i;

/** A URL that carries a password in its userinfo (postgres://u:password@db, https://x:token@host). */
export const URL_WITH_PASSWORD = /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/@:]*:[^\s/@]+@/;
