/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * siw and the iWARP port mapper (iwpmd, through iw_cm): see portmap.c.
 */
#ifndef SIW_PORTMAP_H
#define SIW_PORTMAP_H

#include <linux/socket.h>
#include <linux/types.h>

struct iw_cm_id;
struct net_device;
struct sock;

__be16 siw_pm_port(const struct sockaddr_storage *a);
bool siw_pm_remapped(const struct iw_cm_id *id, bool local);
const char *siw_pm_no_peer_map_hint(const struct iw_cm_id *id);
void siw_pm_share_port(struct sock *sk);
int siw_pm_share_listen_port(struct sock *sk, const struct net_device *ndev);
int siw_pm_may_listen(struct sock *sk, const struct sockaddr_storage *addr,
		      const struct net_device *ndev);

#endif
