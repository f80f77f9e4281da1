// A Docker context's name as `docker context create` accepts it.
export const CONTEXT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}$/;
