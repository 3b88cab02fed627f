"""The official Kubernetes Python client (22.6) against a kube-identity API server, used as a user would.

Usage: python3 python_client_checks.py KUBECONFIG
Each check prints `ok NAME` or `FAIL NAME: why`; the exit code is the number of failed checks (0: all passed).
"""
import base64
import datetime
import json
import sys
import threading
import time
import traceback
import uuid

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kubernetes import client, config, dynamic, utils, watch
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock.configmaplock import ConfigMapLock
from kubernetes.client.rest import ApiException

FAILED = []


def check(fn):
    """Runs one check now; a failure is recorded and printed, and the next check still runs."""
    try:
        fn()
        print(f"ok   {fn.__name__}", flush=True)
    except Exception as e:  # noqa: BLE001 - every failure is reported, whatever it is
        FAILED.append(fn.__name__)
        print(f"FAIL {fn.__name__}: {type(e).__name__}: {e}", flush=True)
        traceback.print_exc(file=sys.stdout)
    return fn


def expect(cond, message):
    if not cond:
        raise AssertionError(message)


def api_error(call, code, reason):
    """`call` must raise ApiException with HTTP `code` and a Status body carrying `reason`; returns the Status."""
    try:
        call()
    except ApiException as e:
        expect(e.status == code, f"expected HTTP {code}, got {e.status}: {e.body}")
        status = json.loads(e.body)
        expect(status.get("kind") == "Status" and status.get("apiVersion") == "v1", f"body is not a v1 Status: {e.body}")
        expect(status.get("code") == code, f"Status.code {status.get('code')} != {code}")
        expect(status.get("reason") == reason, f"Status.reason {status.get('reason')!r} != {reason!r}")
        return status
    raise AssertionError(f"expected ApiException {code} {reason}, the call succeeded")


config.load_kube_config(config_file=sys.argv[1])
core = client.CoreV1Api()
rbac = client.RbacAuthorizationV1Api()
certs = client.CertificatesV1Api()
authn = client.AuthenticationV1Api()
authz = client.AuthorizationV1Api()
apps = client.AppsV1Api()
coord = client.CoordinationV1Api()
NS = "py-" + uuid.uuid4().hex[:8]


def cm(name, labels=None, data=None):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels), data=data)


@check
def version_and_discovery():
    info = client.VersionApi().get_code()
    expect(info.major == "1" and info.minor == "37" and info.git_version.startswith("v1.37.0+kube-identity."), f"version {info}")
    dyn = dynamic.DynamicClient(client.ApiClient())
    for api_version, kind in [("v1", "ConfigMap"), ("rbac.authorization.k8s.io/v1", "ClusterRole"),
                              ("certificates.k8s.io/v1", "CertificateSigningRequest"),
                              ("coordination.k8s.io/v1", "Lease"), ("apps/v1", "ControllerRevision")]:
        dyn.resources.get(api_version=api_version, kind=kind)


@check
def namespace_and_default_service_account():
    created = core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
    expect(created.status.phase == "Active", f"phase {created.status.phase}")
    expect("kubernetes" in (created.spec.finalizers or []), f"finalizers {created.spec.finalizers}")
    sa = core.read_namespaced_service_account("default", NS)
    expect(sa.metadata.name == "default", "no default ServiceAccount")


@check
def create_list_paginate_and_select():
    for i in range(5):
        core.create_namespaced_config_map(NS, cm(f"cm-{i}", {"app": "py", "tier": "a" if i % 2 else "b"}, {"i": str(i)}))
    names, token, pages = [], None, 0
    while True:
        page = core.list_namespaced_config_map(NS, label_selector="app=py", limit=2, _continue=token)
        expect(len(page.items) <= 2, f"page of {len(page.items)} with limit=2")
        names += [c.metadata.name for c in page.items]
        pages += 1
        token = page.metadata._continue
        if not token:
            break
    expect(names == [f"cm-{i}" for i in range(5)] and pages == 3, f"paginated {names} in {pages} pages")
    tier_a = core.list_namespaced_config_map(NS, label_selector="app=py,tier in (a)")
    expect(sorted(c.metadata.name for c in tier_a.items) == ["cm-1", "cm-3"], "label selector tier in (a)")
    one = core.list_namespaced_config_map(NS, field_selector="metadata.name=cm-2")
    expect([c.metadata.name for c in one.items] == ["cm-2"], "field selector metadata.name=cm-2")
    not_b = core.list_namespaced_config_map(NS, label_selector="tier!=b,app")
    expect(len(not_b.items) == 2, f"tier!=b,app gave {len(not_b.items)}")
    everywhere = core.list_config_map_for_all_namespaces(field_selector=f"metadata.namespace={NS}")
    # The namespace's five and the kube-root-ca.crt every namespace gets.
    everywhere_names = sorted(c.metadata.name for c in everywhere.items)
    expect(everywhere_names == [f"cm-{i}" for i in range(5)] + ["kube-root-ca.crt"], f"all-namespaces list with field selector gave {everywhere_names}")


@check
def read_replace_and_conflict():
    got = core.read_namespaced_config_map("cm-0", NS)
    got.data["extra"] = "yes"
    replaced = core.replace_namespaced_config_map("cm-0", NS, got)
    expect(replaced.data == {"i": "0", "extra": "yes"}, f"replaced data {replaced.data}")
    expect(replaced.metadata.resource_version != got.metadata.resource_version, "resourceVersion did not move")
    got.data["stale"] = "yes"  # still carries the old resourceVersion
    status = api_error(lambda: core.replace_namespaced_config_map("cm-0", NS, got), 409, "Conflict")
    expect(status["details"]["name"] == "cm-0", f"Status details {status.get('details')}")


@check
def patches_as_the_client_sends_them():
    # A dict body: the client sends application/strategic-merge-patch+json.
    smp = core.patch_namespaced_config_map("cm-1", NS, {"metadata": {"labels": {"patched": "smp"}}})
    expect(smp.metadata.labels.get("patched") == "smp", "strategic merge patch")
    # A list body: application/json-patch+json.
    jp = core.patch_namespaced_config_map("cm-1", NS, [{"op": "add", "path": "/data/jp", "value": "1"},
                                                       {"op": "test", "path": "/data/i", "value": "1"}])
    expect(jp.data.get("jp") == "1", "json patch")
    api_error(lambda: core.patch_namespaced_config_map("cm-1", NS, [{"op": "test", "path": "/data/i", "value": "9"}]),
              422, "Invalid")
    # Merge patch through the dynamic client, which takes the content type from its caller.
    dyn = dynamic.DynamicClient(client.ApiClient())
    res = dyn.resources.get(api_version="v1", kind="ConfigMap")
    mp = dyn.patch(res, name="cm-1", namespace=NS, body={"data": {"jp": None, "mp": "2"}},
                   content_type="application/merge-patch+json")
    expect(mp.data.mp == "2" and "jp" not in dict(mp.data), f"merge patch gave {mp.data}")
    stale = {"metadata": {"resourceVersion": "1"}, "data": {"x": "y"}}
    api_error(lambda: core.patch_namespaced_config_map("cm-1", NS, stale), 409, "Conflict")


def apply_yaml(dyn, name, yaml_text, api_version="v1", kind="ConfigMap", namespace=NS, **params):
    """Server-side apply as 22.x users do it: its server_side_apply() sends a dict, which the client's REST layer
    refuses for application/apply-patch+yaml, so the YAML goes through the dynamic client's request()."""
    res = dyn.resources.get(api_version=api_version, kind=kind)
    return dyn.request("patch", res.path(name=name, namespace=namespace), body=yaml_text,
                       content_type="application/apply-patch+yaml", **params)


@check
def server_side_apply():
    dyn = dynamic.DynamicClient(client.ApiClient())
    manifest = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: {NS}\ndata:\n  owner: py\n"
    out = apply_yaml(dyn, "applied", manifest, field_manager="py-apply")
    expect(out.data.owner == "py", "apply created")
    managers = [(m.manager, m.operation) for m in out.metadata.managedFields]
    expect(("py-apply", "Apply") in managers, f"managedFields {managers}")
    core.patch_namespaced_config_map("applied", NS, {"data": {"owner": "someone"}}, field_manager="other")
    try:
        apply_yaml(dyn, "applied", manifest, field_manager="py-apply")
        raise AssertionError("apply over another manager's field did not conflict")
    except dynamic.exceptions.ConflictError as e:
        expect(json.loads(e.body)["reason"] == "Conflict", f"conflict body {e.body}")
    forced = apply_yaml(dyn, "applied", manifest, field_manager="py-apply", force_conflicts=True)
    expect(forced.data.owner == "py", "forced apply")
    binding = ("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: 'system:py-applied'}\n"
               "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}\n"
               "subjects: [{kind: User, name: py-carol}]\n")
    crb = apply_yaml(dyn, "system:py-applied", binding, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", None,
                     field_manager="py-apply")
    expect(crb.subjects[0].apiGroup == "rbac.authorization.k8s.io", f"applied subjects {crb.subjects}")
    rbac.delete_cluster_role_binding("system:py-applied")


@check
def delete_with_options():
    core.delete_namespaced_config_map("cm-4", NS, body=client.V1DeleteOptions(propagation_policy="Foreground"))
    core.delete_namespaced_config_map("cm-3", NS, propagation_policy="Background", grace_period_seconds=0)
    status = api_error(lambda: core.read_namespaced_config_map("cm-3", NS), 404, "NotFound")
    expect(status["details"] == {"name": "cm-3", "kind": "configmaps"}, f"Status details {status.get('details')}")
    got = core.read_namespaced_config_map("cm-2", NS)
    wrong_uid = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=str(uuid.uuid4())))
    api_error(lambda: core.delete_namespaced_config_map("cm-2", NS, body=wrong_uid), 409, "Conflict")
    core.delete_namespaced_config_map("cm-2", NS, body=client.V1DeleteOptions(
        preconditions=client.V1Preconditions(uid=got.metadata.uid, resource_version=got.metadata.resource_version)))
    core.delete_collection_namespaced_config_map(NS, label_selector="app=py")
    left = core.list_namespaced_config_map(NS, label_selector="app=py")
    expect(left.items == [], f"delete collection left {[c.metadata.name for c in left.items]}")


@check
def watch_stream_sees_every_change():
    rv = core.list_namespaced_config_map(NS).metadata.resource_version
    seen, w = [], watch.Watch()

    def writer():
        time.sleep(0.3)
        core.create_namespaced_config_map(NS, cm("watched", data={"v": "1"}))
        core.patch_namespaced_config_map("watched", NS, {"data": {"v": "2"}})
        core.delete_namespaced_config_map("watched", NS)

    threading.Thread(target=writer, daemon=True).start()
    for event in w.stream(core.list_namespaced_config_map, NS, resource_version=rv, timeout_seconds=10,
                          allow_watch_bookmarks=True):
        if event["type"] == "BOOKMARK":
            seen.append(("BOOKMARK", event["raw_object"]["metadata"]["resourceVersion"]))
        else:
            seen.append((event["type"], event["object"].metadata.name))
        if event["type"] == "DELETED":
            w.stop()
    changes = [s for s in seen if s[0] != "BOOKMARK"]
    expect(changes == [("ADDED", "watched"), ("MODIFIED", "watched"), ("DELETED", "watched")], f"events {seen}")


@check
def watch_bookmarks_when_asked():
    rv = core.list_namespaced_config_map(NS).metadata.resource_version
    w, kinds = watch.Watch(), []
    for event in w.stream(core.list_namespaced_config_map, NS, resource_version=rv, timeout_seconds=5,
                          allow_watch_bookmarks=True):
        kinds.append(event["type"])
        if event["type"] == "BOOKMARK":
            expect(event["raw_object"]["kind"] == "ConfigMap", f"bookmark object {event['raw_object']}")
            w.stop()
    expect("BOOKMARK" in kinds, f"no bookmark in 5 s: {kinds}")


@check
def system_names_are_percent_encoded():
    role = rbac.read_cluster_role("system:node-bootstrapper")
    expect(role.metadata.name == "system:node-bootstrapper", "read system:node-bootstrapper")
    name = "system:py:reader"
    rbac.create_cluster_role(client.V1ClusterRole(
        metadata=client.V1ObjectMeta(name=name),
        rules=[client.V1PolicyRule(api_groups=[""], resources=["configmaps"], verbs=["get"])]))
    got = rbac.read_cluster_role(name)
    got.rules[0].verbs = ["get", "list"]
    expect(rbac.replace_cluster_role(name, got).rules[0].verbs == ["get", "list"], "replace system:py:reader")
    patched = rbac.patch_cluster_role(name, {"metadata": {"labels": {"p": "y"}}})
    expect(patched.metadata.labels == {"p": "y"}, "patch system:py:reader")
    rbac.delete_cluster_role(name)
    api_error(lambda: rbac.read_cluster_role(name), 404, "NotFound")


@check
def cluster_role_binding_subjects_default_api_group():
    binding = client.V1ClusterRoleBinding(
        metadata=client.V1ObjectMeta(name="py-binding"),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="view"),
        subjects=[client.V1Subject(kind="User", name="py-alice"), client.V1Subject(kind="Group", name="py-team"),
                  client.V1Subject(kind="ServiceAccount", name="default", namespace=NS)])
    created = rbac.create_cluster_role_binding(binding)
    groups = [s.api_group for s in created.subjects]
    expect(groups == ["rbac.authorization.k8s.io", "rbac.authorization.k8s.io", ""] or
           groups == ["rbac.authorization.k8s.io", "rbac.authorization.k8s.io", None], f"subject apiGroups {groups}")
    review = authz.create_subject_access_review(client.V1SubjectAccessReview(spec=client.V1SubjectAccessReviewSpec(
        user="py-alice", resource_attributes=client.V1ResourceAttributes(verb="list", resource="configmaps",
                                                                         namespace=NS))))
    expect(review.status.allowed, f"py-alice may not list configmaps through view: {review.status}")
    rbac.delete_cluster_role_binding("py-binding")


def pkcs10(common_name, organization):
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name),
                         x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization)])
    csr = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    return base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode()


@check
def csr_created_approved_and_read_back():
    name = "py-csr-" + uuid.uuid4().hex[:6]
    certs.create_certificate_signing_request(client.V1CertificateSigningRequest(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1CertificateSigningRequestSpec(request=pkcs10("py-user", "py-group"),
                                                    signer_name="kubernetes.io/kube-apiserver-client",
                                                    usages=["client auth"], expiration_seconds=3600)))
    csr = certs.read_certificate_signing_request(name)
    expect(csr.spec.username and csr.spec.groups, f"requester not recorded: {csr.spec.username} {csr.spec.groups}")
    csr.status.conditions = [client.V1CertificateSigningRequestCondition(
        type="Approved", status="True", reason="PyApprove", message="approved by the Python client")]
    certs.replace_certificate_signing_request_approval(name, csr)
    back = certs.read_certificate_signing_request_status(name)
    approved = [c for c in back.status.conditions if c.type == "Approved"]
    expect(len(approved) == 1 and approved[0].reason == "PyApprove", f"conditions {back.status.conditions}")
    expect(isinstance(approved[0].last_update_time, datetime.datetime), "lastUpdateTime is not a time")
    bad = client.V1CertificateSigningRequest(metadata=client.V1ObjectMeta(name=name + "-bad"),
                                             spec=client.V1CertificateSigningRequestSpec(
                                                 request=base64.b64encode(b"not a CSR").decode(),
                                                 signer_name="kubernetes.io/kube-apiserver-client"))
    api_error(lambda: certs.create_certificate_signing_request(bad), 422, "Invalid")
    certs.delete_certificate_signing_request(name)


@check
def token_request_and_review():
    before = datetime.datetime.now(datetime.timezone.utc)
    tr = core.create_namespaced_service_account_token("default", NS, client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[])))
    expect(tr.spec.expiration_seconds == 3600, f"expirationSeconds {tr.spec.expiration_seconds}")
    lifetime = (tr.status.expiration_timestamp - before).total_seconds()
    expect(3590 <= lifetime <= 3610, f"token lives {lifetime} s")
    review = authn.create_token_review(client.V1TokenReview(spec=client.V1TokenReviewSpec(token=tr.status.token)))
    expect(review.status.authenticated, f"token not authenticated: {review.status}")
    expect(review.status.user.username == f"system:serviceaccount:{NS}:default", f"user {review.status.user}")
    garbage = authn.create_token_review(client.V1TokenReview(spec=client.V1TokenReviewSpec(token="nope")))
    expect(not garbage.status.authenticated, "a garbage token authenticated")


@check
def lease_micro_time():
    offset = datetime.timezone(datetime.timedelta(hours=2))
    acquire = datetime.datetime(2026, 11, 24, 6, 30, 0, 123456, tzinfo=offset)
    lease = client.V1Lease(metadata=client.V1ObjectMeta(name="py-lease"), spec=client.V1LeaseSpec(
        holder_identity="py", lease_duration_seconds=40, acquire_time=acquire, renew_time=acquire))
    created = coord.create_namespaced_lease(NS, lease)
    expect(created.spec.acquire_time == acquire, f"acquireTime {created.spec.acquire_time} != {acquire}")
    raw = json.loads(coord.read_namespaced_lease("py-lease", NS, _preload_content=False).data)
    expect(raw["spec"]["acquireTime"] == "2026-11-24T04:30:00.123456Z", f"stored as {raw['spec']['acquireTime']}")
    expect(raw["metadata"]["creationTimestamp"].endswith("Z") and "." not in raw["metadata"]["creationTimestamp"],
           f"creationTimestamp {raw['metadata']['creationTimestamp']}")
    renewed = coord.patch_namespaced_lease("py-lease", NS, {"spec": {"renewTime": "2026-11-24T06:31:00.500000+02:00"}})
    expect(renewed.spec.renew_time.microsecond == 500000, f"renewTime {renewed.spec.renew_time}")
    raw = json.loads(coord.read_namespaced_lease("py-lease", NS, _preload_content=False).data)
    expect(raw["spec"]["renewTime"] == "2026-11-24T04:31:00.500000Z", f"renewTime stored as {raw['spec']['renewTime']}")
    # MicroTime is parsed with Go's layout ".000000": a patch leaving a shorter fraction, or no time at all, is
    # refused as kube-apiserver refuses it (422 on the patched object).
    for bad in ["2026-11-24T04:31:00.5+00:00", "yesterday"]:
        api_error(lambda: coord.patch_namespaced_lease("py-lease", NS, {"spec": {"renewTime": bad}}), 422, "Invalid")
    # A datetime without microseconds: Python's isoformat() drops the fraction, which MicroTime's layout needs,
    # so kube-apiserver answers 400 to the create; so must we.
    whole = acquire.replace(microsecond=0)
    no_fraction = client.V1Lease(metadata=client.V1ObjectMeta(name="py-lease-2"),
                                 spec=client.V1LeaseSpec(holder_identity="py", renew_time=whole))
    api_error(lambda: coord.create_namespaced_lease(NS, no_fraction), 400, "BadRequest")
    coord.delete_namespaced_lease("py-lease", NS)


@check
def controller_revisions():
    rev = client.V1ControllerRevision(metadata=client.V1ObjectMeta(name="py-rev", labels={"app": "py"}),
                                      data={"spec": {"replicas": 3}}, revision=2)
    apps.create_namespaced_controller_revision(NS, rev)
    listed = apps.list_namespaced_controller_revision(NS, label_selector="app=py")
    expect([r.revision for r in listed.items] == [2], "list controller revisions")
    expect(apps.read_namespaced_controller_revision("py-rev", NS).data == {"spec": {"replicas": 3}}, "data")
    apps.delete_namespaced_controller_revision("py-rev", NS, body=client.V1DeleteOptions())


@check
def secrets_and_raw_reads():
    core.create_namespaced_secret(NS, client.V1Secret(metadata=client.V1ObjectMeta(name="py-secret"),
                                                      string_data={"k": "v"}))
    secret = core.read_namespaced_secret("py-secret", NS)
    expect(secret.type == "Opaque" and secret.data == {"k": base64.b64encode(b"v").decode()}, f"secret {secret}")
    raw = core.read_namespace(NS, _preload_content=False)
    expect(raw.status == 200 and raw.headers["Content-Type"].startswith("application/json"), "raw read")
    expect(json.loads(raw.data)["metadata"]["name"] == NS, "raw read body")
    listed = json.loads(core.list_namespaced_secret(NS, _preload_content=False).data)
    expect(listed["kind"] == "SecretList" and listed["apiVersion"] == "v1", f"raw list kind {listed.get('kind')}")


@check
def errors_are_api_exceptions_with_status():
    api_error(lambda: core.read_namespaced_config_map("nope", NS), 404, "NotFound")
    core.create_namespaced_config_map(NS, cm("dup"))
    api_error(lambda: core.create_namespaced_config_map(NS, cm("dup")), 409, "AlreadyExists")
    status = api_error(lambda: core.create_namespaced_config_map(NS, cm("Not_A_Name")), 422, "Invalid")
    expect(status["details"]["causes"][0]["field"] == "metadata.name", f"causes {status['details']}")
    api_error(lambda: core.list_namespaced_config_map(NS, label_selector="a in (b"), 400, "BadRequest")
    api_error(lambda: core.list_namespaced_config_map(NS, field_selector="spec.nothing=1"), 400, "BadRequest")


@check
def delete_answers_as_upstream():
    core.create_namespaced_config_map(NS, cm("del-me", {"del": "y"}))
    gone = core.delete_namespaced_config_map("del-me", NS)
    expect(gone.status == "Success" and gone.details.name == "del-me" and gone.details.kind == "configmaps",
           f"delete answered {gone}")
    core.create_namespaced_config_map(NS, cm("del-1", {"del": "y"}))
    raw = json.loads(core.delete_collection_namespaced_config_map(NS, label_selector="del=y",
                                                                  _preload_content=False).data)
    expect(raw["kind"] == "ConfigMapList" and [i["metadata"]["name"] for i in raw["items"]] == ["del-1"],
           f"delete collection answered {raw}")


@check
def dry_run_pretty_and_booleans():
    dry = core.create_namespaced_config_map(NS, cm("dry"), dry_run="All")
    expect(dry.metadata.uid, "dry run create returns the object")
    api_error(lambda: core.read_namespaced_config_map("dry", NS), 404, "NotFound")
    pretty = core.read_namespace(NS, pretty="true", _preload_content=False).data.decode()
    expect("\n  " in pretty, "pretty=true is not indented")
    # The client writes Python booleans as True/False.
    listed = core.list_namespaced_config_map(NS, allow_watch_bookmarks=False, watch=False)
    expect(listed.kind == "ConfigMapList", f"watch=False gave {listed.kind}")


@check
def pods_services_and_events():
    pod = core.create_namespaced_pod(NS, client.V1Pod(metadata=client.V1ObjectMeta(name="py-pod"), spec=client.V1PodSpec(
        containers=[client.V1Container(name="c", image="busybox")])))
    expect(pod.spec.service_account_name == "default", f"serviceAccountName {pod.spec.service_account_name}")
    c = pod.spec.containers[0]
    defaults = (pod.spec.restart_policy, pod.spec.dns_policy, pod.spec.termination_grace_period_seconds,
                pod.spec.scheduler_name, c.image_pull_policy, c.termination_message_path, c.termination_message_policy)
    expect(defaults == ("Always", "ClusterFirst", 30, "default-scheduler", "Always", "/dev/termination-log", "File"),
           f"pod defaults (SetDefaults_Pod/PodSpec/Container) {defaults}")
    svc = core.create_namespaced_service(NS, client.V1Service(metadata=client.V1ObjectMeta(name="py-svc"),
                                                             spec=client.V1ServiceSpec(ports=[client.V1ServicePort(port=80)])))
    expect(svc.spec.type == "ClusterIP" and svc.spec.cluster_ip and svc.spec.ports[0].target_port == 80,
           f"service defaults {svc.spec}")
    when = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=123456)
    ev = core.create_namespaced_event(NS, client.CoreV1Event(
        metadata=client.V1ObjectMeta(name="py-ev"), involved_object=client.V1ObjectReference(kind="Pod", name="py-pod",
                                                                                             namespace=NS),
        reason="Tested", message="by the Python client", type="Normal", event_time=when,
        reporting_component="py", reporting_instance="py-1", action="Test"))
    expect(ev.event_time == when, f"eventTime {ev.event_time}")
    core.delete_namespaced_pod("py-pod", NS, grace_period_seconds=0)
    core.delete_namespaced_service("py-svc", NS)


@check
def roles_and_reviews():
    rbac.create_namespaced_role(NS, client.V1Role(metadata=client.V1ObjectMeta(name="system:py-role"), rules=[
        client.V1PolicyRule(api_groups=[""], resources=["secrets"], verbs=["get"])]))
    rbac.create_namespaced_role_binding(NS, client.V1RoleBinding(
        metadata=client.V1ObjectMeta(name="system:py-rb"),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name="system:py-role"),
        subjects=[client.V1Subject(kind="User", name="py-bob")]))
    rb = rbac.read_namespaced_role_binding("system:py-rb", NS)
    expect(rb.subjects[0].api_group == "rbac.authorization.k8s.io", f"subject {rb.subjects[0]}")
    rules = authz.create_self_subject_rules_review(client.V1SelfSubjectRulesReview(
        spec=client.V1SelfSubjectRulesReviewSpec(namespace=NS)))
    expect(any("*" in (r.verbs or []) for r in rules.status.resource_rules), f"admin rules {rules.status}")
    ssar = authz.create_self_subject_access_review(client.V1SelfSubjectAccessReview(
        spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=client.V1ResourceAttributes(
            verb="delete", resource="certificatesigningrequests", group="certificates.k8s.io"))))
    expect(ssar.status.allowed, "admin may not delete CSRs")
    rbac.delete_namespaced_role_binding("system:py-rb", NS)
    rbac.delete_namespaced_role("system:py-role", NS)


@check
def csr_list_watch_and_deny():
    name = "py-deny-" + uuid.uuid4().hex[:6]
    rv = certs.list_certificate_signing_request().metadata.resource_version
    certs.create_certificate_signing_request(client.V1CertificateSigningRequest(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1CertificateSigningRequestSpec(request=pkcs10("py-deny", "py"), usages=["client auth"],
                                                    signer_name="example.com/py-signer")))
    by_signer = certs.list_certificate_signing_request(field_selector="spec.signerName=example.com/py-signer")
    expect([c.metadata.name for c in by_signer.items] == [name], "field selector spec.signerName")
    csr = certs.read_certificate_signing_request(name)
    csr.status.conditions = [client.V1CertificateSigningRequestCondition(type="Denied", status="True", reason="No")]
    certs.replace_certificate_signing_request_approval(name, csr)
    w, seen = watch.Watch(), []
    for event in w.stream(certs.list_certificate_signing_request, resource_version=rv, timeout_seconds=5,
                          field_selector=f"metadata.name={name}"):
        seen.append(event["type"])
        conds = event["object"].status.conditions or []
        if any(c.type == "Denied" for c in conds):
            w.stop()
    expect(seen == ["ADDED", "MODIFIED"], f"CSR watch {seen}")
    certs.delete_certificate_signing_request(name)


def token_client(token):
    """An ApiClient speaking as whoever `token` names, trusting the same CA as the kubeconfig."""
    conf = client.Configuration.get_default_copy()
    conf.cert_file = conf.key_file = None
    conf.api_key = {"authorization": "Bearer " + token}
    return client.ApiClient(conf)


@check
def unauthorized_and_forbidden():
    try:
        client.CoreV1Api(token_client("not-a-token")).list_namespace()
        raise AssertionError("a garbage token listed namespaces")
    except ApiException as e:
        expect(e.status == 401 and json.loads(e.body)["reason"] == "Unauthorized", f"garbage token: {e.status} {e.body}")
    tr = core.create_namespaced_service_account_token("default", NS, client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[])))
    as_sa = client.CoreV1Api(token_client(tr.status.token))
    status = api_error(lambda: as_sa.list_namespaced_secret(NS), 403, "Forbidden")
    want = (f'secrets is forbidden: User "system:serviceaccount:{NS}:default" cannot list resource "secrets" '
            f'in API group "" in the namespace "{NS}"')
    expect(status["message"] == want, f"message {status['message']!r}")
    expect(status["details"] == {"kind": "secrets"}, f"details {status['details']}")


@check
def patch_results_are_defaulted():
    rbac.create_cluster_role_binding(client.V1ClusterRoleBinding(
        metadata=client.V1ObjectMeta(name="system:py-patched"),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="view"),
        subjects=[client.V1Subject(kind="User", name="a")]))
    jp = rbac.patch_cluster_role_binding("system:py-patched", [
        {"op": "add", "path": "/subjects/-", "value": {"kind": "Group", "name": "g"}}])
    expect([s.api_group for s in jp.subjects] == ["rbac.authorization.k8s.io"] * 2, f"json patch {jp.subjects}")
    # Subjects have no merge key: a strategic merge patch replaces the list, as upstream.
    smp = rbac.patch_cluster_role_binding("system:py-patched", {"subjects": [{"kind": "User", "name": "b"}]})
    expect([(s.name, s.api_group) for s in smp.subjects] == [("b", "rbac.authorization.k8s.io")], f"smp {smp.subjects}")
    rbac.delete_cluster_role_binding("system:py-patched")


@check
def strategic_merge_by_key():
    core.create_namespaced_pod(NS, client.V1Pod(metadata=client.V1ObjectMeta(name="smp-pod"), spec=client.V1PodSpec(
        containers=[client.V1Container(name="a", image="one", env=[client.V1EnvVar(name="X", value="1")]),
                    client.V1Container(name="b", image="two")])))
    # A pod's images are all an update may change in its containers: merged by name, the rest kept in place.
    patched = core.patch_namespaced_pod("smp-pod", NS, {"spec": {"containers": [{"name": "b", "image": "three"}]}})
    containers = [(c.name, c.image, sorted(e.name for e in c.env or [])) for c in patched.spec.containers]
    expect(containers == [("a", "one", ["X"]), ("b", "three", [])], f"containers merged by name: {containers}")
    # A merged env is a spec change ValidatePodUpdate refuses, as would a $patch: delete of one.
    status = api_error(lambda: core.patch_namespaced_pod("smp-pod", NS, {"spec": {"containers": [
        {"name": "a", "env": [{"name": "X", "$patch": "delete"}]}]}}), 422, "Invalid")
    expect("pod updates may not change fields other than" in status["message"], f"refusal {status['message']}")
    core.delete_namespaced_pod("smp-pod", NS, body=client.V1DeleteOptions(grace_period_seconds=0))


@check
def nodes_and_status():
    name = "py-node-" + uuid.uuid4().hex[:6]
    core.create_node(client.V1Node(metadata=client.V1ObjectMeta(name=name, labels={"py": "y"})))
    status = core.patch_node_status(name, {"status": {"conditions": [
        {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ok",
         "lastHeartbeatTime": "2026-11-24T04:30:00+00:00", "lastTransitionTime": "2026-11-24T04:30:00Z"}]}})
    ready = status.status.conditions[0]
    expect(ready.status == "True" and ready.last_heartbeat_time.tzinfo is not None, f"condition {ready}")
    raw = json.loads(core.read_node(name, _preload_content=False).data)
    expect(raw["status"]["conditions"][0]["lastHeartbeatTime"] == "2026-11-24T04:30:00Z", f"raw {raw['status']}")
    nodes = core.list_node(label_selector="py=y")
    expect(name in [n.metadata.name for n in nodes.items], "list nodes by label")
    core.delete_node(name)


@check
def events_v1():
    events = client.EventsV1Api()
    when = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=654321)
    ev = events.create_namespaced_event(NS, client.EventsV1Event(
        metadata=client.V1ObjectMeta(name="py-ev1"), event_time=when, reason="Tested", action="Check",
        type="Normal", note="from Python", reporting_controller="example.com/py", reporting_instance="py-1",
        # A namespaced object: an Event about a cluster-scoped one belongs in default or kube-system (422 here).
        regarding=client.V1ObjectReference(kind="ServiceAccount", name="default", namespace=NS)))
    expect(ev.event_time == when, f"eventTime {ev.event_time}")
    # One storage for both groups: the core/v1 Event of pods_services_and_events is listed here too.
    for selector, names in [("reason=Tested", ["py-ev", "py-ev1"]),
                            ("regarding.name=default,regarding.kind=ServiceAccount", ["py-ev1"]),
                            ("reportingController=example.com/py,type=Normal", ["py-ev1"])]:
        listed = sorted(e.metadata.name for e in events.list_namespaced_event(NS, field_selector=selector).items)
        expect(listed == names, f"events.k8s.io list by {selector} gave {listed}")
    api_error(lambda: events.list_namespaced_event(NS, field_selector="involvedObject.name=x"), 400, "BadRequest")


@check
def create_from_yaml_objects():
    docs = [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "py-yaml-sa"}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "system:py-yaml"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
         "subjects": [{"kind": "ServiceAccount", "name": "py-yaml-sa"}, {"kind": "Group", "name": "py-yaml-group"}]},
        {"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py-yaml-cm"}, "data": {"a": "b"}}]},
    ]
    utils.create_from_yaml(client.ApiClient(), yaml_objects=docs, namespace=NS)
    rb = rbac.read_namespaced_role_binding("system:py-yaml", NS)
    # Stored as sent (upstream keeps a RoleBinding's ServiceAccount subject namespace empty)...
    expect([(s.kind, s.api_group or "", s.namespace) for s in rb.subjects] ==
           [("ServiceAccount", "", None), ("Group", "rbac.authorization.k8s.io", None)], f"subjects {rb.subjects}")
    # ...and read by the authorizer as the binding's own namespace.
    tr = core.create_namespaced_service_account_token("py-yaml-sa", NS, client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[])))
    seen = client.CoreV1Api(token_client(tr.status.token)).list_namespaced_config_map(NS)
    expect(any(c.metadata.name == "py-yaml-cm" for c in seen.items), "the bound ServiceAccount cannot list")
    expect(core.read_namespaced_config_map("py-yaml-cm", NS).data == {"a": "b"}, "List item created")


@check
def generate_name_namespace_mismatch_and_versions():
    made = core.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(generate_name="gen-")))
    expect(made.metadata.name.startswith("gen-") and len(made.metadata.name) == 9, f"generated {made.metadata.name}")
    other = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="elsewhere", namespace="default"))
    status = api_error(lambda: core.create_namespaced_config_map(NS, other), 400, "BadRequest")
    expect("does not match the namespace" in status["message"], f"message {status['message']}")
    for params in [{"resource_version": "0"}, {"resource_version": made.metadata.resource_version,
                                               "resource_version_match": "NotOlderThan"}]:
        names = [c.metadata.name for c in core.list_namespaced_config_map(NS, **params).items]
        expect(made.metadata.name in names, f"list with {params} gave {names}")
    api_error(lambda: core.list_namespaced_config_map(NS, resource_version_match="Exact"), 422, "Invalid")


@check
def table_and_dynamic_watch():
    api = client.ApiClient()
    resp = api.call_api(f"/api/v1/namespaces/{NS}/configmaps", "GET", auth_settings=["BearerToken"],
                        header_params={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
                        _preload_content=False)
    table = json.loads(resp[0].data)
    expect(table["kind"] == "Table" and table["columnDefinitions"][0]["name"] == "Name", f"table {table.get('kind')}")
    dyn = dynamic.DynamicClient(api)
    res = dyn.resources.get(api_version="v1", kind="ConfigMap")
    types = []
    for event in dyn.watch(res, namespace=NS, timeout=1):
        types.append(event["type"])
    expect(types and set(types) == {"ADDED"}, f"dynamic watch without resourceVersion: {types}")


@check
def dry_run_delete_and_finalize():
    core.create_namespaced_config_map(NS, cm("keep-me"))
    core.delete_namespaced_config_map("keep-me", NS, dry_run="All")
    expect(core.read_namespaced_config_map("keep-me", NS).metadata.name == "keep-me", "dry-run delete deleted")
    ns = core.read_namespace(NS)
    ns.spec.finalizers = ["kubernetes", "example.com/py"]
    out = core.replace_namespace_finalize(NS, ns)
    expect(out.spec.finalizers == ["kubernetes", "example.com/py"], f"finalize gave {out.spec.finalizers}")
    ns = core.read_namespace(NS)
    ns.spec.finalizers = ["kubernetes"]
    core.replace_namespace_finalize(NS, ns)


@check
def leader_election_with_a_config_map_lock():
    led = threading.Event()
    lock = ConfigMapLock("py-leader", NS, "py-candidate")
    conf = electionconfig.Config(lock, lease_duration=17, renew_deadline=15, retry_period=5,
                                 onstarted_leading=led.set, onstopped_leading=None)
    threading.Thread(target=leaderelection.LeaderElection(conf).run, daemon=True).start()
    expect(led.wait(15), "never became leader")
    record = json.loads(core.read_namespaced_config_map("py-leader", NS).metadata.annotations[
        "control-plane.alpha.kubernetes.io/leader"])
    expect(record["holderIdentity"] == "py-candidate", f"record {record}")


@check
def service_account_issuer_discovery():
    # Both are typed `str` in the client, which turns a parsed body into its Python repr: read them raw.
    conf = client.WellKnownApi().get_service_account_issuer_open_id_configuration(_preload_content=False)
    doc = json.loads(conf.data)
    expect(doc["jwks_uri"].endswith("/openid/v1/jwks"), f"openid-configuration {doc}")
    jwks = client.OpenidApi().get_service_account_issuer_open_id_keyset(_preload_content=False)
    expect(jwks.headers["Content-Type"] == "application/jwk-set+json", f"jwks type {jwks.headers['Content-Type']}")
    keys = json.loads(jwks.data)["keys"]
    expect(keys and all(k["use"] == "sig" and k["kid"] for k in keys), f"jwks {keys}")


@check
def pod_certificate_requests_and_trust_bundles():
    """Both kinds are newer than this client's models: its dynamic client lists and watches them."""
    dyn = dynamic.DynamicClient(client.ApiClient())
    key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "py-ca")])
    now = datetime.datetime.now(datetime.timezone.utc)
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(key, hashes.SHA256()))
    bundles = dyn.resources.get(api_version="certificates.k8s.io/v1", kind="ClusterTrustBundle")
    rv = bundles.get().metadata.resourceVersion
    bundle_name = "example.com:py:" + uuid.uuid4().hex[:6]
    bundles.create(body={"apiVersion": "certificates.k8s.io/v1", "kind": "ClusterTrustBundle", "metadata": {"name": bundle_name},
                         "spec": {"signerName": "example.com/py",
                                  "trustBundle": ca.public_bytes(serialization.Encoding.PEM).decode()}})
    listed = bundles.get(field_selector="spec.signerName=example.com/py")
    expect([b.metadata.name for b in listed.items] == [bundle_name], f"bundles by signer: {listed.items}")
    seen = [(e["type"], e["object"].metadata.name) for e in
            dyn.watch(bundles, resource_version=rv, field_selector="spec.signerName=example.com/py", timeout=1)]
    expect(seen == [("ADDED", bundle_name)], f"bundle watch {seen}")

    requests = dyn.resources.get(api_version="certificates.k8s.io/v1", kind="PodCertificateRequest")
    rv = requests.get(namespace=NS).metadata.resourceVersion
    stub = x509.CertificateSigningRequestBuilder().subject_name(x509.Name([])).sign(key, hashes.SHA256())
    spec = {"signerName": "example.com/py", "podName": "py-pod", "podUID": str(uuid.uuid4()),
            "serviceAccountName": "default", "serviceAccountUID": str(uuid.uuid4()),
            "nodeName": "py-node", "nodeUID": str(uuid.uuid4()),
            "stubPKCS10Request": base64.b64encode(stub.public_bytes(serialization.Encoding.DER)).decode()}
    made = requests.create(namespace=NS, body={"apiVersion": "certificates.k8s.io/v1", "kind": "PodCertificateRequest",
                                               "metadata": {"name": "py-pcr"}, "spec": spec})
    expect(made.spec.maxExpirationSeconds == 86400, f"defaulted maxExpirationSeconds {made.spec.maxExpirationSeconds}")
    by_pod = requests.get(namespace=NS, field_selector="spec.podName=py-pod")
    expect([r.metadata.name for r in by_pod.items] == ["py-pcr"], f"requests by pod: {by_pod.items}")
    requests.delete(name="py-pcr", namespace=NS)
    seen = [(e["type"], e["object"].metadata.name, e["object"].spec.nodeName) for e in
            dyn.watch(requests, namespace=NS, resource_version=rv, field_selector="spec.nodeName=py-node", timeout=1)]
    expect(seen == [("ADDED", "py-pcr", "py-node"), ("DELETED", "py-pcr", "py-node")], f"request watch {seen}")
    bundles.delete(name=bundle_name)


@check
def namespace_deletion():
    core.delete_namespace(NS, body=client.V1DeleteOptions(propagation_policy="Background"))
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            core.read_namespace(NS)
        except ApiException as e:
            expect(e.status == 404, f"reading a deleted namespace: {e.status}")
            return
        time.sleep(0.2)
    raise AssertionError("namespace still there after 20 s")


print(f"{len(FAILED)} failed: {', '.join(FAILED)}" if FAILED else "all checks passed", flush=True)
sys.exit(min(len(FAILED), 100))
