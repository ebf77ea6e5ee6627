"""Router flavors (`l3-flavors`), as Neutron's L3 driver controller: a router made with a
`flavor_id` takes the provider of the flavor's first service profile (`next_providers`:
404 `FlavorNotFound`, a flavor without profiles 404, a disabled profile 503), and with it
that provider's `ha`/`distributed` flags (`ha` and `dvrha` are HA, `dvr` and `dvrha`
distributed); flags the request names that the provider does not support are 400
`InvalidInput`, on create and on update. `flavor_id` is set on create only. A flavor
routers use is not deleted (409 `FlavorInUse`; the foreign key holds it against a race).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.network import errors
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.flavors import flavors
from stackling.network.l3 import routers
from stackling.network.l3.models import Router

EXTENSIONS.append(Extension("l3-flavors", "Router Flavor Extension",
                            "Flavor support for routers.", "2016-05-17T00:00:00-00:00"))

# provider -> (ha, distributed): each of neutron's four drivers supports exactly one value
# of each flag (MANDATORY or UNSUPPORTED)
FLAGS = {"single_node": (False, False), "ha": (True, False), "dvr": (False, True),
         "dvrha": (True, True)}


class FlavorInUse(errors.InUse):
    message = "Flavor %(flavor_id)s is used by some service instance."


def _provider(db: Session, ctx: RequestContext, flavor_id: str) -> str:
    flavor = flavors.get_flavor(db, ctx, flavor_id)
    if flavor.service_type != "L3_ROUTER_NAT":
        raise errors.InvalidInput(error_message=f"Flavor {flavor.id} is of service type "
                                  f"{flavor.service_type}, not L3_ROUTER_NAT")
    if not flavor.enabled:
        raise flavors.FlavorDisabled()
    return str(flavors.next_providers(db, ctx, flavor.id)[0]["provider"])


def _check_flags(provider: str, attrs: dict[str, Any]) -> None:
    ha, distributed = FLAGS[provider]
    for key, supported in (("distributed", distributed), ("ha", ha)):
        flag = attrs.get(key)
        if flag is not None and flag != supported:
            raise errors.InvalidInput(error_message=f"Provider {provider} does not support "
                                      f"{key}={flag}")


def write_router(db: Session, ctx: RequestContext, router: Router, attrs: dict[str, Any],
                 created: bool) -> None:
    """routers.ROUTER_WRITERS."""
    if created:
        if not attrs.get("flavor_id"):
            return
        provider = _provider(db, ctx, attrs["flavor_id"])
        _check_flags(provider, attrs)
        router.flavor_id = attrs["flavor_id"]
        router.ha, router.distributed = FLAGS[provider]
        return
    if router.flavor_id and (attrs.get("ha") is not None
                             or attrs.get("distributed") is not None):
        if (attrs.get("ha", router.ha), attrs.get("distributed", router.distributed)) != (
                router.ha, router.distributed):
            raise errors.InvalidInput(error_message="Changing the 'ha' and 'distributed' "
                                      "attributes on a router associated with a flavor is "
                                      "not supported")


def check_flavor_delete(db: Session, flavor_id: str) -> None:
    """flavors.DELETE_CHECKS."""
    if db.scalar(select(Router.id).where(Router.flavor_id == flavor_id).limit(1)):
        raise FlavorInUse(flavor_id=flavor_id)


routers.ROUTER_WRITERS.append(write_router)
flavors.DELETE_CHECKS.append(check_flavor_delete)
