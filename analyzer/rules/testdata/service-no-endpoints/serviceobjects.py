"""Writes the objects of a service-no-endpoints scenario: those of
network-policy-clusterip (argv[1], `kubectl get ... -o json`) changed as
the scenario (argv[2]) says. The Service shop/cart's Endpoints lose their
addresses and its EndpointSlice is dropped, as the endpoints controller
leaves a Service without endpoints, but where the scenario says."""
import copy
import json
import sys

kube = json.load(open(sys.argv[1]))
scenario = sys.argv[2]
items = [o for o in kube["items"] if o["kind"] != "EndpointSlice"]
byname = {(o["kind"], o["metadata"]["name"].split("-")[0]): o for o in items}
svc, ep, pod = byname[("Service", "cart")], byname[("Endpoints", "cart")], byname[("Pod", "cart")]
ep.pop("subsets", None)


def ready(p, status):
    for c in p["status"]["conditions"]:
        if c["type"] in ("Ready", "ContainersReady"):
            c["status"] = status


def ingress(paths):
    """An Ingress of shop for shop.example.com, its paths to Services."""
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"creationTimestamp": "2026-11-24T18:40:12Z", "generation": 1, "name": "shop",
                         "namespace": "shop", "resourceVersion": "47411",
                         "uid": "3c2b1a09-8f7e-4d6c-9b5a-4e3f2d1c0b9a"},
            "spec": {"ingressClassName": "nginx", "rules": [{"host": "shop.example.com", "http": {"paths": [
                {"backend": {"service": {"name": name, "port": {"number": 80}}}, "path": path,
                 "pathType": "Prefix"} for path, name in paths]}}]},
            "status": {"loadBalancer": {}}}


if scenario == "selector-matches-no-pod":
    svc["spec"]["selector"] = {"app": "shopping-cart"}
elif scenario == "pods-not-ready":
    ready(pod, "False")
elif scenario == "pod-manifest-no-status":
    del pod["status"]
elif scenario == "one-pod-by-name":
    # One Pod of another app, as `kubectl get pod NAME -o json` gives it.
    pod["metadata"]["labels"] = {"app": "storefront"}
    items = [svc, ep]
    with open(sys.argv[3], "w") as f:
        json.dump(pod, f, indent=4)
        print(file=f)
elif scenario == "not-ready-pod-ready":
    ep["subsets"] = [{"notReadyAddresses": [{"ip": pod["status"]["podIP"], "nodeName": "node-1",
                                             "targetRef": {"kind": "Pod", "name": pod["metadata"]["name"],
                                                           "namespace": "shop",
                                                           "uid": pod["metadata"]["uid"]}}],
                      "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}]
elif scenario == "two-namespaces":
    for o in (svc, ep):
        c = copy.deepcopy(o)
        c["metadata"]["namespace"] = "shop-staging"
        items.append(c)
    items[-1]["subsets"] = [{"notReadyAddresses": [{"ip": "10.86.3.31", "nodeName": "node-2"}],
                             "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}]
elif scenario == "external-name":
    svc["spec"] = {"externalName": "cart.legacy.example.com", "sessionAffinity": "None", "type": "ExternalName"}
    items.remove(ep)
elif scenario == "kic-port-the-service-has":
    pass
elif scenario == "placeholder-one-backend":
    ready(pod, "False")
    items.append(ingress([("/", "cart")]))
elif scenario == "placeholder-two-backends":
    ready(pod, "False")
    items.append(ingress([("/api", "cart"), ("/", "storefront")]))
else:
    sys.exit("no scenario " + scenario)
kube["items"] = items
json.dump(kube, sys.stdout, indent=4)
print()
