// The Docker filesystem, environment and limits battery (docker-fs.test.ts) again, in the sealed network mode.
process.env.SBTEST_DOCKER_MODE = 'sealed';
await import('./docker-fs.test.js');
