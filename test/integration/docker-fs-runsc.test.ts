// The Docker filesystem, environment and limits battery (docker-fs.test.ts) again, in the sealed network mode under gVisor (runsc).
process.env.SBTEST_DOCKER_MODE = 'runsc';
await import('./docker-fs.test.js');
