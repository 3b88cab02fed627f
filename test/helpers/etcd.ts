/** The etcd the storage suites start and stop (shared with the benchmarks, which build without test/). */
export { startEtcd, type EtcdCluster, type EtcdMember, type EtcdOptions } from '../../bench/lib/etcd-cluster.js';
