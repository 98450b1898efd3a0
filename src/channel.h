/* SPDX-License-Identifier: MIT */
/*
 * A process's channel (channel.c): the socket pair on which controllers
 * offer it streams, with the sender's credentials.
 */
#ifndef PT_CHANNEL_H
#define PT_CHANNEL_H

#include <stdint.h>
#include <sys/types.h>

struct pt_offer_msg {
	uint32_t magic;
	uint32_t slot;
	uint32_t gen;
	uint32_t reserved;
};
#define PT_OFFER_MAGIC 0x4f545450u /* "PTTO" */

int pt_channel_create(int *rx, int *tx);
int pt_channel_send(int tx, const struct pt_offer_msg *msg, int fd);
int pt_channel_recv(int rx, struct pt_offer_msg *msg, int *fd, uid_t *sender_uid);
int pt_channel_peek(int rx, struct pt_offer_msg *msg, int *fd, uid_t *sender_uid);

#endif
