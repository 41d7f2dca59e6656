# Request options of a CartesianProductStreamSlicer of four ListPartitionRouters in the CDK:
# prints, for each slice, its partition and the query parameters and headers it asks for,
# keys in the CDK's order.
import json

from airbyte_cdk.sources.declarative.partition_routers.cartesian_product_stream_slicer import (
    CartesianProductStreamSlicer,
)
from airbyte_cdk.sources.declarative.partition_routers.list_partition_router import ListPartitionRouter
from airbyte_cdk.sources.declarative.requesters.request_option import RequestOption, RequestOptionType


def router(values, key, place, name):
    option = RequestOption(field_name=name, inject_into=place, parameters={})
    return ListPartitionRouter(values=values, cursor_field=key, config={}, parameters={}, request_option=option)


param, header = RequestOptionType.request_parameter, RequestOptionType.header
product = CartesianProductStreamSlicer(
    stream_slicers=[
        router(["https://a.test", "https://b.test"], "url", param, "url"),
        router(["s1"], "first", param, "shared"),
        router(["desktop"], "strategy", param, "strategy"),
        router(["s2"], "last", param, "shared"),
        router(["h1"], "h1", header, "X-One"),
        router(["h2"], "h2", header, "X-Two"),
    ],
    parameters={},
)
for s in product.stream_slices():
    print(json.dumps({
        "partition": dict(s.partition),
        "params": list(product.get_request_params(stream_slice=s).items()),
        "headers": list(product.get_request_headers(stream_slice=s).items()),
    }))
